"""Forms of the browser UI."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.core.validators import validate_slug
from django.utils.text import slugify


class FirstRunForm(forms.Form):
    username = forms.CharField(max_length=150, label="Your username")
    email = forms.EmailField(required=False, label="Email (optional)")
    password = forms.CharField(widget=forms.PasswordInput, label="Password", strip=False)
    password_again = forms.CharField(
        widget=forms.PasswordInput, label="Password again", strip=False
    )
    workspace_name = forms.CharField(
        max_length=200, label="First workspace", initial="My workspace"
    )
    workspace_slug = forms.CharField(
        max_length=64,
        required=False,
        validators=[validate_slug],
        label="Workspace slug (optional)",
        help_text="Used in URLs and the API; derived from the name when left empty.",
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
