-- Staff roles (issue 25): what a user's sessions may do. Users made before roles existed ran the whole
-- dashboard, so they stay owners; a new user is given a role when created (`service users create --role`).
ALTER TABLE staff_users ADD COLUMN role text NOT NULL DEFAULT 'owner'
    CHECK (role IN ('owner', 'manager', 'cashier'));
ALTER TABLE staff_users ALTER COLUMN role DROP DEFAULT;
