from django.db import migrations

from judging import immutability


def install(apps, schema_editor):
    immutability.install(schema_editor.connection)


def uninstall(apps, schema_editor):
    immutability.uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]
    operations = [migrations.RunPython(install, uninstall)]
