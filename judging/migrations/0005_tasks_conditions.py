"""Runs of many tasks (format blindjudge.run/2), reviews under conditions, abstentions.

Every run imported before holds one task: it becomes a Task (id "task") that all its copies and
items name, and its run object (name and task, as the run/1 bundle had them) is kept for the
manifest check. Every review was a clean one: its condition is "clean", the default. The finding's
raised_by table gains the condition of the review that raised it (the many-to-many field's own
table becomes the FindingRaise model's, so no row moves). Opened sessions' stored task render
moves from the session's render row to a TaskRender of the run's one task, unchanged.
"""

import django.db.models.deletion
from django.db import migrations, models


def tasks_from_runs(apps, schema_editor):
    Run, Task = apps.get_model("judging", "Run"), apps.get_model("judging", "Task")
    Copy, Item = apps.get_model("judging", "Copy"), apps.get_model("judging", "Item")
    for run in Run.objects.order_by("pk"):
        task = Task.objects.create(run=run, bundle_id="task", title="", statement=run.task,
                                   format="markdown", cluster="", position=0)
        Copy.objects.filter(run=run).update(task=task)
        Item.objects.filter(copy__run=run).update(task=task)
        run.bundle_run = {"name": run.name, "task": run.task}
        run.save(update_fields=["bundle_run"])


def session_renders_from_task_renders(apps, schema_editor):
    SessionRender = apps.get_model("judging", "SessionRender")
    TaskRender = apps.get_model("judging", "TaskRender")
    for render in TaskRender.objects.order_by("pk"):
        SessionRender.objects.filter(session_id=render.session_id).update(task_html=render.html)


def runs_from_tasks(apps, schema_editor):
    """Backwards: only a database whose every run is a run/1 run can go back."""
    Run, Task = apps.get_model("judging", "Run"), apps.get_model("judging", "Task")
    Review = apps.get_model("judging", "Review")
    for run in Run.objects.order_by("pk"):
        tasks = list(Task.objects.filter(run=run).order_by("position"))
        # (Review conditions are gone already at this point: going back removed them first, and
        # refused reviews of one copy under two conditions by the old unique constraint.)
        if len(tasks) != 1 or Review.objects.filter(run=run, verdict="abstain").exists():
            raise RuntimeError(f"cannot migrate back before 0005: run {run.pk} is a run/2 run "
                               "(several tasks or abstentions)")
        run.task = tasks[0].statement
        run.save(update_fields=["task"])


def task_renders_from_session_renders(apps, schema_editor):
    SessionRender = apps.get_model("judging", "SessionRender")
    TaskRender, Task = apps.get_model("judging", "TaskRender"), apps.get_model("judging", "Task")
    for render in SessionRender.objects.select_related("session").order_by("pk"):
        if not render.complete:
            continue  # a draft's unfinished opening: the next opening renders everything again
        task = Task.objects.get(run_id=render.session.run_id)
        TaskRender.objects.create(session_id=render.session_id, task=task,
                                  inputs_sha256=render.inputs_sha256, html=render.task_html)


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0004_renders"),
    ]

    operations = [
        migrations.CreateModel(
            name="Task",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("bundle_id", models.CharField(help_text="The task's id inside the bundle.", max_length=200)),
                ("title", models.CharField(blank=True, help_text="Optional short title.", max_length=200)),
                ("statement", models.TextField(help_text="The task statement (untrusted, shown inertly).")),
                ("format", models.CharField(choices=[("text", "Text"), ("markdown", "Markdown")], default="markdown", max_length=10)),
                ("cluster", models.CharField(blank=True, help_text="Group id for resampling by cluster (e.g. repository).", max_length=200)),
                ("position", models.PositiveIntegerField(help_text="Import order within the run.")),
                ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="tasks", to="judging.run")),
            ],
            options={
                "ordering": ["run", "position"],
                "constraints": [models.UniqueConstraint(fields=("run", "bundle_id"), name="task_unique_bundle_id")],
            },
        ),
        migrations.AddField(
            model_name="run",
            name="bundle_run",
            field=models.JSONField(default=dict, help_text="The bundle's run object exactly as it appeared (its manifest hash is computed over it)."),
        ),
        migrations.AddField(
            model_name="run",
            name="default_condition",
            field=models.CharField(default="clean", help_text="The condition of the clean reviews: the ones judges see in phase 2 and the report scores reviewers on.", max_length=100),
        ),
        migrations.AddField(
            model_name="run",
            name="abstain_scoring",
            field=models.CharField(choices=[("not_flagged", "Not Flagged"), ("excluded", "Excluded")], default="not_flagged", help_text="How a review without a verdict is scored: not_flagged or excluded.", max_length=20),
        ),
        migrations.AlterField(
            model_name="run",
            name="format",
            field=models.CharField(help_text="Bundle format, e.g. blindjudge.run/2.", max_length=40),
        ),
        migrations.AddField(
            model_name="copy",
            name="task",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="copies", to="judging.task"),
        ),
        migrations.AddField(
            model_name="item",
            name="task",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="judging.task", help_text="The copy's task, kept here so the judge's page finds the task's render without reading the copy row."),
        ),
        migrations.RunPython(tasks_from_runs, runs_from_tasks),
        migrations.AlterField(
            model_name="copy",
            name="task",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="copies", to="judging.task"),
        ),
        migrations.AlterField(
            model_name="item",
            name="task",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="judging.task", help_text="The copy's task, kept here so the judge's page finds the task's render without reading the copy row."),
        ),
        # A default first, so that going back re-adds the column to existing rows (and then
        # runs_from_tasks fills it).
        migrations.AlterField(model_name="run", name="task", field=models.TextField(default="")),
        migrations.RemoveField(model_name="run", name="task"),
        # Reviews under conditions; abstentions.
        migrations.AddField(
            model_name="review",
            name="condition",
            field=models.CharField(default="clean", help_text="What the reviewer was told besides the copy; the run's default_condition for a clean review.", max_length=100),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="review",
            name="verdict",
            field=models.CharField(choices=[("pass", "Pass"), ("fail", "Fail"), ("abstain", "Abstain")], max_length=10),
        ),
        migrations.RemoveConstraint(model_name="review", name="review_one_per_pair"),
        migrations.AddConstraint(
            model_name="review",
            constraint=models.UniqueConstraint(fields=("reviewer", "copy", "condition"), name="review_one_per_condition"),
        ),
        # raised_by: the auto-created table becomes FindingRaise's (Django's documented way of
        # giving a many-to-many field a through model without moving data).
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="FindingRaise",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("finding", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="judging.finding")),
                        ("reviewer", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="judging.reviewer")),
                    ],
                    options={"db_table": "judging_finding_raised_by",
                             "unique_together": {("finding", "reviewer")}},
                ),
                migrations.AlterField(
                    model_name="finding",
                    name="raised_by",
                    field=models.ManyToManyField(related_name="findings_raised", through="judging.FindingRaise", to="judging.reviewer"),
                ),
            ],
        ),
        migrations.AddField(
            model_name="findingraise",
            name="condition",
            field=models.CharField(default="clean", help_text="The condition of that review.", max_length=100),
            preserve_default=False,
        ),
        migrations.AlterUniqueTogether(name="findingraise", unique_together=set()),
        migrations.AddConstraint(
            model_name="findingraise",
            constraint=models.UniqueConstraint(fields=("finding", "reviewer", "condition"), name="findingraise_one_per_condition"),
        ),
        # Task renders.
        migrations.CreateModel(
            name="TaskRender",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("inputs_sha256", models.CharField(max_length=64)),
                ("html", models.TextField()),
                ("session", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="task_renders", to="judging.session")),
                ("task", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="judging.task")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("session", "task"), name="taskrender_one_per_task")],
            },
        ),
        migrations.RunPython(task_renders_from_session_renders, session_renders_from_task_renders),
        migrations.RemoveField(model_name="sessionrender", name="task_html"),
        migrations.AlterField(
            model_name="sessionrender",
            name="inputs_sha256",
            field=models.CharField(help_text="SHA-256 of what the renders depend on (tasks, rubric, redaction patterns); renders made for other inputs are thrown away, never served.", max_length=64),
        ),
    ]
