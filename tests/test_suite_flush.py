"""The suite's flush (tests/suite_flush/management/commands/flush.py), as a transactional
test's teardown calls it, on both databases: every table emptied but the content types and
permissions migrate made, which stay as they were; a permission a test added or deleted is put
back as migrate made it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command

from tests.conftest import on_every_backend

pytestmark = on_every_backend(transaction=True)


def teardown_flush(alias: str) -> None:
    # What django.test.TransactionTestCase._fixture_teardown passes.
    call_command(
        "flush",
        verbosity=0,
        interactive=False,
        database=alias,
        reset_sequences=False,
        allow_cascade=False,
        inhibit_post_migrate=False,
    )


def rows(alias: str, model) -> list[tuple]:
    return list(model.objects.using(alias).order_by("pk").values_list())


def test_the_content_types_and_permissions_stay_and_whose_they_were_goes(alias):
    teardown_flush(alias)  # the first of a process is Django's whole flush: it takes the measure
    types, permissions = rows(alias, ContentType), rows(alias, Permission)
    decide = Permission.objects.using(alias).get(codename="decide")
    user = User.objects.db_manager(alias).create_user("ada")
    user.user_permissions.add(decide)
    group = Group.objects.using(alias).create(name="reviewers")
    group.permissions.add(decide)
    user.groups.add(group)

    teardown_flush(alias)

    assert rows(alias, ContentType) == types
    assert rows(alias, Permission) == permissions  # the same rows, ids and all
    for model in (User, Group, User.user_permissions.through, Group.permissions.through):
        assert not model.objects.using(alias).exists(), model
    assert not User.groups.through.objects.using(alias).exists()


@pytest.mark.parametrize("change", ["deleted", "added"])
def test_a_permission_a_test_changed_is_as_migrate_made_it_after(alias, change):
    teardown_flush(alias)
    codenames = set(Permission.objects.using(alias).values_list("codename", flat=True))
    if change == "deleted":
        Permission.objects.using(alias).filter(codename="decide").delete()
    else:
        Permission.objects.using(alias).create(
            codename="extra",
            name="Can do extra",
            content_type=ContentType.objects.db_manager(alias).get_for_model(User),
        )

    teardown_flush(alias)

    assert set(Permission.objects.using(alias).values_list("codename", flat=True)) == codenames
