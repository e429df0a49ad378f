"""The pattern pages under /patterns/ (SPEC §3.5): staff only, plain HTML forms
with CSRF, no JavaScript needed. Every change goes through ``patterns.changes``."""

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from patterns import changes, marks, trials
from patterns.builtins import BUILTINS
from patterns.detection import compile_status, current_matcher, detect_matches, reply_detect
from patterns.filters import PatternFilter
from patterns.forms import PatternForm, TryReplyForm
from patterns.matching import is_blank, model_may_judge
from patterns.models import Category, HermesErrorPattern, PatternChange
from project.errors import Conflict, Invalid
from project.pages import staff_page

#: Every shipped built-in and the first custom patterns (at least 100) fit on the first page, however many built-ins
#: a release ships: the built-ins' count rounded up to a hundred, plus a hundred.
PAGE_SIZE = (len(BUILTINS) // 100 + 2) * 100


staff_required = staff_page(gettext_lazy("The pattern pages are for staff users."))


def _who(request) -> dict:
    return {"actor": request.user, "via": "page"}


def _back(request, default: str):
    """Redirect to a safe ``next`` from the form, else to ``default``."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return redirect(target)
    return redirect(default)


def _apply_errors(form, error: Invalid | Conflict) -> None:
    """Put a rule's refusal on the form: per field when it names one."""
    if error.errors:
        for field, texts in error.errors.items():
            for text in texts:
                form.add_error(field if field in form.fields else None, text)
    else:
        form.add_error(None, error.message)


def try_reply(text: str) -> dict:
    """The verdict for ``text`` with the text split around the match for ``<mark>``.

    A blank reply is FAILED whatever the patterns say (SPEC §4.4 step 6), so it
    comes back with ``blank`` set and the category ``incomplete``."""
    if is_blank(text):
        return {
            "found": None,
            "blank": True,
            "category_label": Category.INCOMPLETE.label,
            "before": text,
            "match": "",
            "after": "",
        }
    matcher = current_matcher()
    judged = reply_detect(text, matcher=matcher)
    score = {"model_score": judged.model_score}
    if judged.matched_by == "model":
        return {
            "found": None,
            "model": judged.model,
            "category_label": Category.label_of(judged.model.category),
            "before": text,
            "match": "",
            "after": "",
            **score,
        }
    found = judged.detection
    if found is None:
        left_out = judged.model_score is not None and not model_may_judge(
            text, head_chars=settings.PATTERNS_SCAN_CHARS, probability=judged.model_score
        )
        return {
            "found": None,
            "before": text,
            "match": "",
            "after": "",
            "matches": [],
            "model_left_out": left_out,
            **score,
        }
    start, end = found.span
    return {
        "found": found,
        "matches": [
            {"found": match, "category_label": Category.label_of(match.category), "text": text[slice(*match.span)]}
            for match in detect_matches(text, matcher=matcher)
        ],
        "category_label": Category.label_of(found.category),
        "before": text[:start],
        "match": text[start:end],
        "after": text[end:],
        **score,
    }


def reset_summary(result: changes.ResetResult) -> str:
    """The banner after "Reset to defaults", each count with its own plural form."""
    deleted = ngettext("%(count)d custom pattern deleted", "%(count)d custom patterns deleted", result.deleted)
    restored = ngettext("%(count)d built-in restored", "%(count)d built-ins restored", result.restored)
    inserted = ngettext(
        "%(count)d missing built-in re-installed", "%(count)d missing built-ins re-installed", result.inserted
    )
    return _("Reset to defaults: %(deleted)s, %(restored)s, %(inserted)s.") % {
        "deleted": deleted % {"count": result.deleted},
        "restored": restored % {"count": result.restored},
        "inserted": inserted % {"count": result.inserted},
    }


def _shown_value(name: str, value):
    """A history value as a person reads it: yes/no for a flag, the label of a category."""
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if name == "category" and isinstance(value, str):
        return Category.label_of(value)
    return value


def history_rows(changes_qs) -> list[dict]:
    """History rows for the pattern page: each change with the fields it touched
    as ``(label, before, after)``; a create, copy or re-install lists every field."""
    labels = {name: HermesErrorPattern._meta.get_field(name).verbose_name for name in changes.EDITABLE_FIELDS}
    rows = []
    for change in changes_qs:
        before, after = change.before or {}, change.after or {}
        fields = [
            (labels.get(name, name), _shown_value(name, before.get(name)), _shown_value(name, after.get(name)))
            for name in changes.EDITABLE_FIELDS
            if (name in before or name in after) and before.get(name) != after.get(name)
        ]
        rows.append({"change": change, "fields": fields, "show_before": bool(before) and bool(after)})
    return rows


@staff_required
@require_http_methods(["GET"])
def pattern_list(request):
    """The table of patterns with the filters, and the "Try a reply" box."""
    patterns_filter = PatternFilter(request.GET or None, queryset=HermesErrorPattern.objects.all())
    page = Paginator(patterns_filter.qs, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "patterns/list.html",
        {
            "filter": patterns_filter,
            "page_obj": page,
            "query": query.urlencode(),
            "try_form": TryReplyForm(),
            "categories": Category.choices,
            "compile_status": compile_status(),
        },
    )


@staff_required
@require_http_methods(["GET"])
def pattern_detail(request, pk):
    """One pattern with its history, newest first."""
    pattern = get_object_or_404(HermesErrorPattern, pk=pk)
    history = PatternChange.objects.filter(pattern_ref=pattern.pk).order_by("-created_at", "-id")
    return render(
        request,
        "patterns/detail.html",
        {
            "pattern": pattern,
            "history": history_rows(history),
            "false_positives": marks.pattern_false_positive_count(pattern=pattern),
            "compile_status": compile_status(),
        },
    )


def _save_form(request, form, save):
    if form.is_valid():
        try:
            saved = save(form.cleaned_data)
        except (Invalid, Conflict) as error:
            _apply_errors(form, error)
        else:
            messages.success(request, _("Saved “%(name)s”.") % {"name": saved.name})
            return redirect("patterns:detail", pk=saved.pk)
    return None


@staff_required
@require_http_methods(["GET", "POST"])
def pattern_create(request):
    """The "New pattern" form."""
    form = PatternForm(request.POST or None)
    if request.method == "POST":
        done = _save_form(request, form, lambda values: changes.pattern_create(values=values, **_who(request)))
        if done:
            return done
    return render(request, "patterns/form.html", {"form": form, "pattern": None})


@staff_required
@require_http_methods(["GET", "POST"])
def pattern_edit(request, pk):
    """The edit form; a built-in's name and pattern are read-only."""
    pattern = get_object_or_404(HermesErrorPattern, pk=pk)
    form = PatternForm(request.POST or None, instance=HermesErrorPattern.objects.get(pk=pk))
    if request.method == "POST":
        done = _save_form(
            request,
            form,
            lambda values: changes.pattern_update(
                target=pattern, values={name: values[name] for name in form.changed_data}, **_who(request)
            ),
        )
        if done:
            return done
    return render(request, "patterns/form.html", {"form": form, "pattern": pattern})


@staff_required
@require_POST
def pattern_trial(request, pk=None):
    """The form's "Try against recorded replies" button: run the draft on the
    last judged replies (:mod:`patterns.trials`) and show the form again,
    nothing saved."""
    pattern = get_object_or_404(HermesErrorPattern, pk=pk) if pk is not None else None
    form = PatternForm(request.POST, instance=HermesErrorPattern.objects.get(pk=pk) if pattern else None)
    pattern_text = form.trial_pattern()
    trial = None
    if pattern_text is not None:
        trial = trials.pattern_draft_trial(pattern_text=pattern_text, pattern=pattern, scope=form.trial_scope())
    return render(request, "patterns/form.html", {"form": form, "pattern": pattern, "trial": trial})


@staff_required
@require_http_methods(["GET", "POST"])
def pattern_delete(request, pk):
    """Ask, then delete a custom pattern; a built-in is refused (409)."""
    pattern = get_object_or_404(HermesErrorPattern, pk=pk)
    refusal, status = None, 200
    if request.method == "POST":
        try:
            changes.pattern_delete(target=pattern, **_who(request))
        except Conflict as error:
            refusal, status = error.message, 409
        else:
            messages.success(request, _("Deleted “%(name)s”.") % {"name": pattern.name})
            return redirect("patterns:list")
    return render(request, "patterns/confirm_delete.html", {"pattern": pattern, "refusal": refusal}, status=status)


@staff_required
@require_POST
def pattern_toggle(request, pk):
    """The enabled switch: flip and go back."""
    try:
        pattern = changes.pattern_toggle(target=get_object_or_404(HermesErrorPattern, pk=pk), **_who(request))
    except Invalid as refused:
        messages.error(request, refused.message)
        return _back(request, reverse("patterns:list"))
    if pattern.enabled:
        messages.success(request, _("Enabled “%(name)s”.") % {"name": pattern.name})
    else:
        messages.success(request, _("Disabled “%(name)s”.") % {"name": pattern.name})
    return _back(request, reverse("patterns:list"))


@staff_required
@require_POST
def pattern_copy(request, pk):
    """Copy into an editable custom pattern and open its edit form."""
    copy = changes.pattern_copy(source=get_object_or_404(HermesErrorPattern, pk=pk), **_who(request))
    messages.success(
        request, _("Copied to “%(name)s”; it starts disabled: edit it below, then enable it.") % {"name": copy.name}
    )
    return redirect("patterns:edit", pk=copy.pk)


@staff_required
@require_http_methods(["GET", "POST"])
def patterns_reset(request):
    """Reset to defaults: a confirmation page first (works without JavaScript)."""
    if request.method == "POST":
        result = changes.patterns_reset(**_who(request))
        messages.success(request, reset_summary(result))
        return redirect("patterns:list")
    custom_count = HermesErrorPattern.objects.filter(is_built_in=False).count()
    return render(request, "patterns/confirm_reset.html", {"custom_count": custom_count})


@staff_required
@require_http_methods(["GET", "POST"])
def pattern_try(request):
    """ "Try a reply": which enabled pattern (if any) matches, with the match marked."""
    form = TryReplyForm(request.POST or None)
    result = None
    if request.method == "POST" and form.is_valid():
        result = try_reply(form.cleaned_data["text"])
    return render(request, "patterns/try.html", {"try_form": form, "result": result})
