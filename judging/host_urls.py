"""The host's pages (all under /host/). Every view starts with the host guard."""

urlpatterns = []
