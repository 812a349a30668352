"""Who a judge is and how they came in, and the kinds of credential (Django TextChoices). A leaf:
the models import these, and a page needs them without the models.
"""

from django.db import models


class AdmittedAs(models.TextChoices):
    INVITED = "invited"
    GUEST = "guest"
    HOST = "host"


class IdentifiedBy(models.TextChoices):
    GITHUB = "github"
    TOKEN = "token"


class JudgeStatus(models.TextChoices):
    ACTIVE = "active"
    REMOVED = "removed"


class CredentialKind(models.TextChoices):
    JOIN = "join"
    RESUME = "resume"
    GUEST = "guest"
