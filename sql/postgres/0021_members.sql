-- Keys the CLI's `personal-key create` (or INIT_PERSONAL_API_KEY) gave the password-less admin@localhost, on a store
-- whose organization already has an owner who can sign in: they move to that owner (the first of the first such
-- organization), so they show in a Settings page someone can open, and admin@localhost leaves the organizations that
-- have such an owner (no one can sign in as it). New stores do this when that owner is created.
create temporary table hidden_admin_adoption on commit drop as
    select distinct on (admin.id) admin.id as admin_id, owner.id as owner_id
    from users admin
    join organization_members am on am.user_id = admin.id
    join organizations o on o.id = am.organization_id
    join organization_members om on om.organization_id = am.organization_id and om.level = 15 and om.user_id <> admin.id
    join users owner on owner.id = om.user_id and owner.password_hash is not null
    where admin.email = 'admin@localhost' and admin.password_hash is null
    order by admin.id, o.created_at, o.id, om.created_at, owner.id;

update personal_api_keys k set user_id = a.owner_id from hidden_admin_adoption a where k.user_id = a.admin_id;

delete from organization_members am
using hidden_admin_adoption a
where am.user_id = a.admin_id
  and exists (
    select 1 from organization_members om join users owner on owner.id = om.user_id
    where om.organization_id = am.organization_id and om.level = 15 and owner.password_hash is not null);
