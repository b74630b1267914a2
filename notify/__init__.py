"""Staff notifications: what happened that a user chose to hear of, in the dashboard's bell and by mail."""
