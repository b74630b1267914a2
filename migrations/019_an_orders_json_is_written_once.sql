-- An order's JSON is written once per command: as its state. Readers map the state to its view
-- (actors/views.py), and a recorded answer that held the order's view names the version it answered instead
-- (`commands.version`), rebuilt from the order's events when a retry asks for it. Answers recorded before this
-- hold their view and have no version.
ALTER TABLE orders DROP COLUMN view;
ALTER TABLE commands ADD COLUMN version int;
