from django.db import migrations, models
from django.db.models import Max


def stamp_existing(apps, schema_editor):
    """Judges who acted before the stamp existed get it from what the progress page read until
    now: the newest of their verdicts' and drafts' saves and their sockets' openings."""
    Judge = apps.get_model("accounts", "Judge")
    Verdict = apps.get_model("judging", "Verdict")
    ItemDraft = apps.get_model("judging", "ItemDraft")
    LiveSocket = apps.get_model("judging", "LiveSocket")
    latest = {}
    for rows in (
        Verdict.objects.order_by().values_list("assignment__judge_id").annotate(at=Max("updated_at")),
        ItemDraft.objects.order_by().values_list("assignment__judge_id").annotate(at=Max("updated_at")),
        LiveSocket.objects.order_by().values_list("judge_id").annotate(at=Max("opened_at")),
    ):
        for judge_id, at in rows:
            if at is not None and (judge_id not in latest or at > latest[judge_id]):
                latest[judge_id] = at
    for judge_id, at in latest.items():
        Judge.objects.filter(pk=judge_id).update(last_acted_at=at)


class Migration(migrations.Migration):
    """Issue 32 item 2: a judge's last activity kept on their row (the Judge model lives in
    accounts; the verdicts, drafts and sockets it is first read from in judging)."""

    dependencies = [
        ("accounts", "0005_invitation_note"),
        ("judging", "0019_pairs"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="last_acted_at",
            field=models.DateTimeField(
                blank=True, null=True,
                help_text="The judge's latest save that changed a verdict or a reason, or page "
                          "opened (a socket opened); null before any. Pings of an open tab are "
                          "not acts."),
        ),
        migrations.RunPython(stamp_existing, migrations.RunPython.noop),
    ]
