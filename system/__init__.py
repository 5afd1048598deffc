"""Infrastructure every other app may lean on: worker heartbeats, health, process control.

It sits below `workspaces` in the dependency order and knows no other app of ours.
"""
