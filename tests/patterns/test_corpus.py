"""The labelled corpus of the second signal is sound (SPEC §3.3a)."""

import re

import pytest

from patterns.corpus import (
    BATCHES,
    CATEGORY_KEYS,
    ORDINARY_BATCHES,
    batch_rows_load,
    corpus_rows_load,
    extra_rows_load,
    family_folds,
    heldout_families_draw,
    ordinary_batch_rows_load,
    ordinary_rows_load,
    training_fold_rows_load,
)


@pytest.fixture(scope="module")
def corpus():
    return corpus_rows_load()


def test_the_corpus_has_at_least_four_hundred_rows(corpus):
    folds, heldout = corpus
    assert len(folds) + len(heldout) >= 400


def test_every_row_names_a_public_source_url_and_a_family(corpus):
    for row in corpus[0] + corpus[1]:
        assert row["source"].startswith("https://"), row["id"]
        assert row["family"].strip(), row["id"]


def test_at_least_two_rows_in_five_are_negatives(corpus):
    rows = corpus[0] + corpus[1]
    assert sum(not row["isError"] for row in rows) >= 0.4 * len(rows)


def test_no_family_is_both_in_the_folds_and_in_the_held_out_part(corpus):
    folds, heldout = corpus
    assert not {row["family"] for row in folds} & {row["family"] for row in heldout}


def test_errors_carry_a_valid_category_and_non_errors_none(corpus):
    for row in corpus[0] + corpus[1]:
        if row["isError"]:
            assert row["category"] in CATEGORY_KEYS, row["id"]
            assert isinstance(row["retryable"], bool), row["id"]
        else:
            assert row["category"] is None and row["retryable"] is None, row["id"]


def test_ids_are_unique_and_no_text_repeats_an_old_tuning_row(corpus):
    rows = corpus[0] + corpus[1]
    assert len({row["id"] for row in rows}) == len(rows)
    old = {row["text"].strip() for row in extra_rows_load()}
    assert not [row["id"] for row in rows if row["text"].strip() in old]


def test_the_held_out_part_is_the_seeded_draw_over_families(corpus):
    folds, heldout = corpus
    assert heldout_families_draw(folds + heldout) == {row["family"] for row in heldout}


def test_family_folds_keep_each_family_in_one_fold(corpus):
    folds = family_folds(corpus[0], k=5, seed=7)
    families = [{row["family"] for row in fold} for fold in folds]
    assert sum(len(f) for f in families) == len(set().union(*families))
    assert sum(len(fold) for fold in folds) == len(corpus[0])


LATER_BATCHES = [batch for batch in BATCHES if batch.number > 1]


@pytest.fixture(scope="module", params=LATER_BATCHES, ids=lambda batch: f"batch{batch.number}")
def later_batch(request):
    return request.param, batch_rows_load(request.param.number)


def test_a_later_batch_holds_at_least_one_hundred_and_sixty_rows_two_in_five_negatives(later_batch):
    _batch, (folds, heldout) = later_batch
    rows = folds + heldout
    assert len(rows) >= 160
    assert sum(not row["isError"] for row in rows) >= 0.4 * len(rows)


def test_a_later_batch_is_labelled_like_the_first(later_batch):
    _batch, (folds, heldout) = later_batch
    for row in folds + heldout:
        assert row["source"].startswith("https://") and row["family"].strip(), row["id"]
        assert row["lang"] == ("zh" if re.search(r"[\u4e00-\u9fff]", row["text"]) else "en"), row["id"]
        if row["isError"]:
            assert row["category"] in CATEGORY_KEYS and isinstance(row["retryable"], bool), row["id"]
        else:
            assert row["category"] is None and row["retryable"] is None, row["id"]


def test_a_later_batch_held_out_part_is_the_seeded_draw_over_its_families(later_batch):
    batch, (folds, heldout) = later_batch
    assert not {row["family"] for row in folds} & {row["family"] for row in heldout}
    assert heldout_families_draw(folds + heldout, seed=batch.seed) == {row["family"] for row in heldout}


def test_a_later_batch_shares_no_family_id_or_text_with_an_earlier_batch_or_the_old_sets(later_batch):
    batch, (folds, heldout) = later_batch
    later = folds + heldout
    earlier = [row for number in range(1, batch.number) for part in batch_rows_load(number) for row in part]
    assert len({row["id"] for row in later}) == len(later)
    assert not {row["family"] for row in earlier} & {row["family"] for row in later}
    assert not {row["id"] for row in earlier} & {row["id"] for row in later}
    old = {row["text"].strip() for row in earlier + extra_rows_load()}
    assert not [row["id"] for row in later if row["text"].strip() in old]


def test_a_later_batch_shares_no_source_url_with_an_earlier_batch(later_batch):
    batch, (folds, heldout) = later_batch
    earlier = {row["source"] for number in range(1, batch.number) for part in batch_rows_load(number) for row in part}
    assert not earlier & {row["source"] for row in folds + heldout}


@pytest.fixture(scope="module")
def ordinary():
    return ordinary_rows_load()


def test_the_ordinary_answers_hold_at_least_three_hundred_rows_from_forty_families(ordinary):
    rows = ordinary[0] + ordinary[1]
    assert len(rows) >= 300 and len({row["family"] for row in rows}) >= 40


def test_every_ordinary_answer_is_a_non_error_with_a_public_source_and_a_family(ordinary):
    for row in ordinary[0] + ordinary[1]:
        assert row["isError"] is False and row["category"] is None and row["retryable"] is None, row["id"]
        assert row["source"].startswith(("https://", "http://")) and row["family"].startswith("ord-"), row["id"]


def test_the_ordinary_answers_mix_languages_and_short_label_colon_answers(ordinary):
    rows = ordinary[0] + ordinary[1]
    assert sum(row["lang"] == "zh" for row in rows) >= 40
    assert all((row["lang"] == "zh") == bool(re.search(r"[\u4e00-\u9fff]", row["text"])) for row in rows)
    short_labelled = [row for row in rows if len(row["text"]) < 80 and re.match(r"^[\w ]{2,20}[:：]", row["text"])]
    assert len(short_labelled) >= 30


@pytest.mark.parametrize("batch", ORDINARY_BATCHES, ids=lambda batch: f"ordinary-{batch.number}")
def test_each_ordinary_batch_s_held_out_part_is_the_seeded_draw_over_its_families(batch):
    folds, heldout = ordinary_batch_rows_load(batch.number)
    assert folds and heldout
    assert not {row["family"] for row in folds} & {row["family"] for row in heldout}
    drawn = heldout_families_draw(folds + heldout, seed=batch.seed)
    assert drawn == {row["family"] for row in heldout}


def test_no_family_is_in_two_ordinary_batches():
    families = [
        {row["family"] for part in ordinary_batch_rows_load(b.number) for row in part} for b in ORDINARY_BATCHES
    ]
    assert not set.intersection(*families)


def test_no_ordinary_answer_repeats_a_corpus_or_old_tuning_text_or_id(corpus, ordinary):
    rows = ordinary[0] + ordinary[1]
    assert len({row["id"] for row in rows}) == len(rows)
    others = corpus[0] + corpus[1] + extra_rows_load()
    assert not {row["id"] for row in rows} & {row["id"] for row in others}
    assert not {row["text"].strip() for row in rows} & {row["text"].strip() for row in others}


def test_training_folds_are_every_batch_folds_and_the_ordinary_folds_never_a_held_out_part(ordinary):
    ids = {row["id"] for row in training_fold_rows_load()}
    folds = [row for batch in BATCHES for row in batch_rows_load(batch.number)[0]]
    assert ids == {row["id"] for row in folds + ordinary[0]}
    assert (
        len(BATCHES) == 23 and len(ORDINARY_BATCHES) == 8 and all(batch_rows_load(batch.number)[0] for batch in BATCHES)
    )
