from django.db import migrations

from judging import immutability


def install(apps, schema_editor):
    # The tables guarded at this point in history; later ones install their own (0015).
    immutability.install(schema_editor.connection, ("judging_verdict", "judging_auditevent"))


def uninstall(apps, schema_editor):
    immutability.uninstall(schema_editor.connection, ("judging_verdict", "judging_auditevent"))


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
