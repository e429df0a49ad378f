"""Recording API routes under ``/api/`` (SPEC §4.3); every path takes an
optional trailing slash, for POST too."""

from django.urls import re_path

from contextquery.api import token_views, views

RUN = r"^runs/(?P<run_id>[^/]+)"
VISIT = RUN + r"/visits/(?P<visit_uuid>[^/]+)"

urlpatterns = [
    re_path(r"^runs/?$", views.RunListCreateView.as_view(), name="api-runs"),
    re_path(RUN + r"/?$", views.RunDetailView.as_view(), name="api-run"),
    re_path(RUN + r"/finish/?$", views.RunFinishView.as_view(), name="api-run-finish"),
    re_path(RUN + r"/visits/?$", views.VisitListRegisterView.as_view(), name="api-run-visits"),
    re_path(VISIT + r"/?$", views.VisitDetailView.as_view(), name="api-visit"),
    re_path(VISIT + r"/logs/?$", views.VisitLogsView.as_view(), name="api-visit-logs"),
    re_path(VISIT + r"/heartbeat/?$", views.VisitHeartbeatView.as_view(), name="api-visit-heartbeat"),
    re_path(VISIT + r"/complete/?$", views.VisitCompleteView.as_view(), name="api-visit-complete"),
    re_path(VISIT + r"/missed-failure/?$", views.VisitMissedFailureView.as_view(), name="api-visit-missed-failure"),
    re_path(VISIT + r"/tokens/?$", token_views.VisitTokenIssueView.as_view(), name="api-visit-tokens"),
    re_path(VISIT + r"/tokens/revoke/?$", token_views.VisitTokenRevokeView.as_view(), name="api-visit-tokens-revoke"),
]
