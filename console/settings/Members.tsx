// The organization's members (GET /api/organizations/:id/members/): everyone sees who belongs and with what role;
// an owner adds a member (an existing account, or a new one with a first password), changes a role or removes a
// member. What the signed-in user's role cannot do is not offered (the last owner's own row has no controls).
import { useState } from 'preact/hooks'
import { api } from '../lib/api'
import { ConfirmedButton, ErrorNote, Field, time, valueOf } from '../lib/ui'
import { useAction } from '../lib/forms'
import { ListBody, LoadMore, Table, usePages } from '../lib/lists'
import { useSession } from '../lib/session'

interface Member {
  user: { uuid: string; email: string; first_name: string }
  level: number
  joined_at: string
  can_sign_in: boolean
}

export const OWNER_LEVEL = 15
const ROLES: readonly (readonly [number, string])[] = [
  [1, 'Member'],
  [8, 'Admin'],
  [15, 'Owner'],
]
const roleName = (level: number) => ROLES.find(([l]) => l === level)?.[1] ?? `Level ${level}`

function RoleSelect(props: { label: string; value: number; disabled?: boolean; onChange: (level: number) => void }) {
  return (
    <select aria-label={props.label} value={String(props.value)} disabled={props.disabled} onChange={(e) => props.onChange(Number(valueOf(e)))}>
      {ROLES.map(([level, name]) => (
        <option key={level} value={String(level)}>
          {name}
        </option>
      ))}
    </select>
  )
}

function AddMember(props: { path: string; onAdded: () => void }) {
  const [email, setEmail] = useState('')
  const [level, setLevel] = useState(1)
  const [password, setPassword] = useState('')
  const [added, setAdded] = useState<string | null>(null)
  const action = useAction()
  const submit = (event: Event) => {
    event.preventDefault()
    setAdded(null)
    void action.run(async () => {
      const body: Record<string, unknown> = { email: email.trim(), level }
      if (password !== '') body.password = password
      const member = await api<Member>(props.path, { json: body })
      setAdded(`${member.user.email} was added as ${roleName(member.level).toLowerCase()}.`)
      setEmail('')
      setPassword('')
      setLevel(1)
      props.onAdded()
    })
  }
  return (
    <form class="stack" onSubmit={submit} aria-label="Add a member">
      <div class="row">
        <Field label="Email">
          <input type="email" required maxLength={254} autocomplete="off" value={email} onInput={(e) => setEmail(valueOf(e))} />
        </Field>
        <Field label="Role">
          <select value={String(level)} onChange={(e) => setLevel(Number(valueOf(e)))}>
            {ROLES.map(([l, name]) => (
              <option key={l} value={String(l)}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="First password" hint="For someone new: they sign in with it. Leave empty to add someone who already has an account.">
          <input type="password" minLength={8} maxLength={1024} autocomplete="new-password" value={password} onInput={(e) => setPassword(valueOf(e))} />
        </Field>
      </div>
      <div class="row">
        <button type="submit" class="primary" disabled={action.busy}>
          Add member
        </button>
      </div>
      <ErrorNote error={action.error} />
      {added ? (
        <p role="status" class="ok">
          {added}
        </p>
      ) : null}
    </form>
  )
}

export function Members() {
  const { me, projectId } = useSession()
  const organizationId = me.projects.find((p) => p.id === projectId)?.organization ?? null
  const path = `/api/organizations/${organizationId ?? '@current'}/members/`
  const members = usePages<Member>(`${path}?limit=100`, (m) => m.user.uuid, [path])
  const action = useAction()
  const mine = members.items.find((m) => m.user.email === me.email)
  const isOwner = mine?.level === OWNER_LEVEL
  const owners = members.items.filter((m) => m.level === OWNER_LEVEL && m.can_sign_in).length
  const change = (member: Member, level: number) =>
    action.run(async () => {
      await api(`${path}${member.user.uuid}/`, { method: 'PATCH', json: { level } })
      members.reload()
    })
  const remove = (member: Member) =>
    action.run(async () => {
      await api(`${path}${member.user.uuid}/`, { method: 'DELETE' })
      members.reload()
    })
  // the organization keeps an owner: its last owner is not offered a way to step down or leave
  const controlsFor = (m: Member) => isOwner && !(m.level === OWNER_LEVEL && owners <= 1)
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p class="muted small">
        Owners add members and set their roles. Admins may also reset the project token; members use the projects.
        {isOwner || members.loading ? '' : ' Ask an owner to add or remove someone.'}
      </p>
      {isOwner ? <AddMember path={path} onAdded={members.reload} /> : null}
      <ErrorNote error={action.error ?? members.error} />
      <ListBody state={members} count={members.items.length} what="members" empty="No members.">
        <Table caption="Members" columns={['Email', 'Role', 'Joined', isOwner && 'Actions']}>
          {members.items.map((m) => (
            <tr key={m.user.uuid}>
              <td>
                {m.user.email}
                {m.can_sign_in ? '' : ' (cannot sign in)'}
              </td>
              <td>
                {controlsFor(m) ? (
                  <RoleSelect label={`Role of ${m.user.email}`} value={m.level} disabled={action.busy} onChange={(level) => change(m, level)} />
                ) : (
                  roleName(m.level)
                )}
              </td>
              <td>{time(m.joined_at)}</td>
              {isOwner ? (
                <td>
                  {controlsFor(m) ? (
                    <ConfirmedButton label="Remove" name={`Remove ${m.user.email}`} title={`Remove ${m.user.email} from the organization?`} disabled={action.busy} onConfirm={() => remove(m)}>
                      <p>They lose access to the organization's projects at once. Their account and personal keys stay.</p>
                    </ConfirmedButton>
                  ) : null}
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      </ListBody>
      <LoadMore pages={members} what="members" />
    </section>
  )
}
