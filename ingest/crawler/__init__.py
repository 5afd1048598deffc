"""Django-independent building blocks for crawling websites: URL normalisation and scope,
an SSRF-guarded fetcher, robots.txt, sitemaps, link extraction, per-host rate limiting, and
the policy that says what each fetched page's answer means (`policy.py`).

Nothing here reads Django settings; the crawl loop passes them in, so these pieces can be
tested (and reasoned about) on their own.
"""
