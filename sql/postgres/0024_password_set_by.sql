-- Who chose a user's current password when it was not the user: an owner adding a new member gives them a first
-- password (phog sends no email), so that owner knows it until the user changes it. Such an account is not let into
-- another organization by that organization's owners unless the one who chose the password owns it too: otherwise
-- an owner could make an account for someone's email, wait for another organization to add that email, and sign in
-- to it. Null: the user chose it (or the operator, with the CLI).
alter table users add column if not exists password_set_by integer;
