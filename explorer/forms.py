"""Forms of the browser UI.

Accessibility is decided here rather than in each template: every field says what the
browser may autofill (`autocomplete`), and the cursor starts where the person has to act —
the first field on a fresh form, the first field with an error after a failed submit — so
keyboard and screen-reader users land on the problem instead of hunting for it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.core.validators import validate_slug
from django.utils.text import slugify


class FocusFirstProblemMixin(forms.Form):
    """Autofocus the first visible field, or after validation the first one with an error.

    Forms that are one part of a larger page set `autofocus_first_field = False`: moving
    the cursor past the page's heading and content there would only disorient; they still
    take the focus to a field with an error.
    """

    autofocus_first_field = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.autofocus_first_field:
            self._focus(next(iter(self.visible_fields()), None))

    def full_clean(self) -> None:
        super().full_clean()
        invalid = [f for f in self.visible_fields() if f.errors]
        if invalid:
            self._focus(invalid[0])

    def _focus(self, chosen: forms.BoundField | None) -> None:
        for bound in self.visible_fields():
            bound.field.widget.attrs.pop("autofocus", None)
        if chosen is not None:
            chosen.field.widget.attrs["autofocus"] = True


class FirstRunForm(FocusFirstProblemMixin):
    username = forms.CharField(
        max_length=150,
        label="Your username",
        widget=forms.TextInput(
            attrs={"autocomplete": "username", "autocapitalize": "none", "spellcheck": "false"}
        ),
    )
    email = forms.EmailField(
        required=False,
        label="Email (optional)",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        label="Password",
        strip=False,
        help_text=password_validation.password_validators_help_text_html(),
    )
    password_again = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        label="Password again",
        strip=False,
    )
    workspace_name = forms.CharField(
        max_length=200,
        label="First workspace",
        initial="My workspace",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    workspace_slug = forms.CharField(
        max_length=64,
        required=False,
        validators=[validate_slug],
        label="Workspace slug (optional)",
        help_text="Used in URLs and the API; derived from the name when left empty.",
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}
        ),
    )

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"].strip()
        get_user_model().username_validator(username)
        return username

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        password, again = data.get("password"), data.get("password_again")
        if password and again and password != again:
            self.add_error("password_again", "The two passwords differ.")
        elif password:
            user = get_user_model()(username=data.get("username", ""), email=data.get("email", ""))
            try:
                password_validation.validate_password(password, user)
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        if not data.get("workspace_slug") and data.get("workspace_name"):
            data["workspace_slug"] = slugify(data["workspace_name"])[:64] or "workspace"
        return data


class ApiTokenForm(FocusFirstProblemMixin):
    """Name a new API token after what will use it, so a leak can be traced and revoked."""

    autofocus_first_field = False

    name = forms.CharField(
        max_length=100,
        label="Token name",
        help_text="What will use it, e.g. “ci” or “research-agent”.",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
