"""The host's pages, one module per area (runs, sessions, blinding, invitations, judges, reports,
account); what every page shares is in common.py. Nothing is re-exported: host/urls.py names each
view by its module."""
