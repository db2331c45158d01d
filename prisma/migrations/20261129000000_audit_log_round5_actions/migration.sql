-- The actions of leaked-key reports (key.leaked: a leak recorded without revoking the key) and of
-- webhook endpoints' changes join those the audit log accepts.
ALTER TABLE "audit_log" DROP CONSTRAINT "audit_log_action_check";

ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_action_check" CHECK ("action" IN (
    'key.created', 'key.updated', 'key.rolled', 'key.revoked', 'key.leaked',
    'admin_token.created', 'admin_token.revoked',
    'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated'));
