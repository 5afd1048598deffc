from django.contrib.auth import views as auth_views
from django.urls import path

from explorer import views

app_name = "explorer"

urlpatterns = [
    path("", views.home, name="home"),
    path("setup/", views.setup, name="setup"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="explorer/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
