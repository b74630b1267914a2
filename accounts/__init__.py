"""The merchants' accounts: merchants and their API keys, staff accounts and memberships, invitations, roles,
the audit log and receipt addresses. Imports only `common`."""
