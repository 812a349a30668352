from django.contrib import admin
from django.urls import include, path

from judging import views as judging_views

urlpatterns = [
    path("", judging_views.home, name="home"),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
]
