"""A person's approval lifts the approval rules only: a step only a person can take
(a login, a GUI, hardware) stays with the person, approved or not."""

from __future__ import annotations

from tests.loop.conftest import Project

from tether.loop import tick

APPROVED = {"by": "ann@desk", "at": "2025-06-01T09:00:00Z", "note": "deploy is fine"}


def test_the_approval_passes_the_approval_rules_and_not_the_session_rules(
    project: Project,
) -> None:
    policy = project.open().policy
    deploy = policy.assess("Deploy the new API", approved=True)
    assert deploy is None
    login = policy.assess("Log in to the registrar and deploy", approved=True)
    assert login is not None and (login.reason, login.rule) == ("session", "login")


def test_an_approved_ticket_that_needs_a_login_goes_to_the_person_and_never_runs(
    project: Project,
) -> None:
    ticket = project.add(
        "Renew the certificate", body="Log in to the registrar and renew.\n", approved=APPROVED
    )
    done = tick(project.open())
    assert done.dispatched is not None and done.dispatched.decision == "policy"
    assert project.location(ticket.id) == "USER/session"
    assert "policy rule `login`" in (project.board.get(ticket.id).needs or "")
    assert project.run_count() == 0
