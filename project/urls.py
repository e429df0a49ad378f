"""Root URLs. Each app owns its pages (``<app>/urls.py``) and its API
(``<app>/api/urls.py``); API routes accept an optional trailing slash."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from project import views

handler404 = "project.views.handler404"
handler500 = "project.views.handler500"

urlpatterns = [
    # Browsers ask for /favicon.ico on pages that link no icon (the admin, Swagger UI, JSON).
    path("favicon.ico", RedirectView.as_view(url=static("hermes/favicon.svg"), permanent=False)),
    re_path(r"^healthz/?$", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    re_path(r"^api/schema/?$", SpectacularAPIView.as_view(), name="schema"),
    re_path(r"^api/docs/?$", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/", include("patterns.api.urls")),
    path("api/", include("contextquery.api.urls")),
    path("api/", include("contextquery.api.tool_urls")),
    path("internal/context/", include("contextquery.api.internal_urls")),
    path("internal/tools/", include("contextquery.api.internal_tool_urls")),
    path("patterns/", include("patterns.urls")),
    path("runs/", include("contextquery.urls")),
    # The overview at /, the visits across runs at /visits/, /metrics (SPEC §8).
    path("", include("contextquery.overview_urls")),
    path("tools/", include("contextquery.tool_urls")),
]
