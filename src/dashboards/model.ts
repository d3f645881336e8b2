// TypeBox schemas of saved insights and dashboards: what the routes answer, and what the OpenAPI document shows.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'
import { DASHBOARD_LIMITS as L } from './validation'

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])
const date = () => nullable(t.String({ format: 'date-time' }))

export const DashboardTileRef = model('DashboardTileRef', t.Object({ id: t.Integer(), dashboard_id: t.Integer(), deleted: t.Boolean() }))

export const Insight = model(
  'Insight',
  t.Object({
    id: t.Integer(),
    short_id: t.String({ description: '8 random characters, unique in the project (list with ?short_id=)' }),
    name: nullable(t.String()),
    derived_name: nullable(t.String()),
    description: t.String(),
    query: t.Any({ description: 'the saved query node: {"kind": "InsightVizNode" | "DataTableNode", "source": {…}} or a bare query node' }),
    filters: t.Any({ description: 'always {} (legacy filters are not supported)' }),
    order: t.Null(),
    deleted: t.Boolean(),
    favorited: t.Boolean(),
    saved: t.Boolean(),
    tags: t.Array(t.String()),
    dashboards: t.Array(t.Integer(), { description: 'ids of the dashboards it is on' }),
    dashboard_tiles: t.Array(DashboardTileRef),
    created_at: date(),
    created_by: t.Any({ description: 'the user who created it, or null' }),
    updated_at: date(),
    last_modified_at: date(),
    last_modified_by: t.Any(),
    last_refresh: date(),
    result: t.Any({ description: "the query's results (rows, or series), computed with ?refresh=true or stored from the last refresh; null if none" }),
    hasMore: nullable(t.Boolean()),
    columns: nullable(t.Array(t.Any())),
    types: nullable(t.Array(t.Any())),
    hogql: nullable(t.String()),
    is_cached: t.Boolean({ description: 'the result is the stored one, not computed for this request' }),
    timezone: t.String({ description: "the project's timezone" }),
    query_status: t.Null(),
    cache_target_age: t.Null(),
    next_allowed_client_refresh: t.Null(),
    is_sample: t.Boolean(),
  }),
)

export const InsightPage = pageModel('InsightPage', Insight)

export const InsightWrite = model(
  'InsightWrite',
  t.Object(
    {
      name: t.Optional(nullable(t.String({ maxLength: L.nameLength }))),
      derived_name: t.Optional(nullable(t.String({ maxLength: L.nameLength }))),
      description: t.Optional(t.String({ maxLength: L.descriptionLength })),
      query: t.Optional(t.Any({ description: `a query node, at most ${L.queryBytes} bytes of JSON and ${L.queryDepth} levels deep` })),
      favorited: t.Optional(t.Boolean()),
      saved: t.Optional(t.Boolean()),
      deleted: t.Optional(t.Boolean()),
      tags: t.Optional(t.Array(t.String({ maxLength: L.tagLength }), { maxItems: L.tags })),
      dashboards: t.Optional(t.Array(t.Integer(), { description: 'the whole list of dashboards it is on' })),
    },
    { description: 'unknown fields are ignored' },
  ),
)

export const DashboardBasic = model(
  'DashboardBasic',
  t.Object({
    id: t.Integer(),
    name: nullable(t.String()),
    description: t.String(),
    pinned: t.Boolean(),
    created_at: date(),
    created_by: t.Any(),
    last_refresh: date(),
    is_shared: t.Boolean(),
    deleted: t.Boolean(),
    creation_mode: t.String(),
    tags: t.Array(t.String()),
    filters: t.Any({ description: 'always {}' }),
  }),
)

export const DashboardPage = pageModel('DashboardPage', DashboardBasic)

export const TileErrorBody = model(
  'TileError',
  t.Object({ type: t.String(), code: t.String(), detail: t.String(), attr: nullable(t.String()) }, { description: 'why the tile has no fresh result' }),
)

export const DashboardTile = model(
  'DashboardTile',
  t.Object({
    id: t.Integer(),
    insight: Insight,
    text: t.Null(),
    color: nullable(t.String()),
    layouts: t.Any(),
    deleted: t.Boolean(),
    is_cached: t.Boolean(),
    last_refresh: date(),
    error: nullable(TileErrorBody),
  }),
)

export const Dashboard = model(
  'Dashboard',
  t.Object({ ...DashboardBasic.properties, tiles: t.Array(DashboardTile) }),
)

export const DashboardWrite = model(
  'DashboardWrite',
  t.Object(
    {
      name: t.Optional(nullable(t.String({ maxLength: L.nameLength }))),
      description: t.Optional(t.String({ maxLength: L.descriptionLength })),
      pinned: t.Optional(t.Boolean()),
      deleted: t.Optional(t.Boolean()),
      tags: t.Optional(t.Array(t.String({ maxLength: L.tagLength }), { maxItems: L.tags })),
      tiles: t.Optional(
        t.Array(
          t.Object({ id: t.Integer(), deleted: t.Optional(t.Boolean()), color: t.Optional(nullable(t.String())), layouts: t.Optional(t.Any()) }),
          { maxItems: L.tilesPerDashboard, description: 'PATCH only: change or remove (deleted: true) tiles by id' },
        ),
      ),
    },
    { description: 'unknown fields are ignored' },
  ),
)
