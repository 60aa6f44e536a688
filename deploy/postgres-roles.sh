#!/bin/sh
# The portal's database and its two roles, set up by the PostgreSQL superuser:
#   portal_owner  owns the database, its `public` schema and every object in it; runs the migrations
#                 (the compose file's `migrate` service) and nothing else
#   portal_app    what web, the workers and beat connect as: CONNECT, USAGE on the schema, SELECT /
#                 INSERT / UPDATE / DELETE on the tables and USAGE / SELECT on the sequences the owner
#                 creates (default privileges); no CREATE, no TRUNCATE, no superuser, no replication.
#                 On the audit tables `manage.py db_grants portal_app` (run by `migrate` after the
#                 migrations) leaves it SELECT and INSERT only.
# Neither role is a superuser, so neither can `SET session_replication_role = replica` (which would
# switch the append-only triggers off); only the owner may ALTER TABLE ... DISABLE TRIGGER.
#
# The postgres image runs this once, when it initialises an empty data directory (it is mounted into
# /docker-entrypoint-initdb.d). It is idempotent: run it again at any time, e.g. on a database set up
# before these roles existed (it hands every object of `public` to the owner):
#   docker compose exec postgres sh /docker-entrypoint-initdb.d/10-portal-roles.sh
# Settings (environment): POSTGRES_USER (the superuser to connect as; PGHOST/PGPORT as psql reads
# them), PORTAL_DB_NAME (portal), PORTAL_DB_OWNER (portal_owner), PORTAL_DB_APP (portal_app), and the
# files holding the two passwords, PORTAL_DB_OWNER_PASSWORD_FILE and PORTAL_DB_APP_PASSWORD_FILE
# (/run/secrets/postgres_owner_password, /run/secrets/postgres_app_password).
set -eu

PORTAL_DB_OWNER_PASSWORD=$(cat "${PORTAL_DB_OWNER_PASSWORD_FILE:-/run/secrets/postgres_owner_password}")
PORTAL_DB_APP_PASSWORD=$(cat "${PORTAL_DB_APP_PASSWORD_FILE:-/run/secrets/postgres_app_password}")
export PORTAL_DB_OWNER_PASSWORD PORTAL_DB_APP_PASSWORD

psql --no-psqlrc --quiet -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v db="${PORTAL_DB_NAME:-portal}" -v owner="${PORTAL_DB_OWNER:-portal_owner}" -v app="${PORTAL_DB_APP:-portal_app}" <<'SQL'
-- The passwords come from the environment, never the command line (a process list shows that).
\getenv owner_password PORTAL_DB_OWNER_PASSWORD
\getenv app_password PORTAL_DB_APP_PASSWORD

SELECT format('CREATE ROLE %I', :'owner') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'owner') \gexec
SELECT format('CREATE ROLE %I', :'app') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'app') \gexec
ALTER ROLE :"owner" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password';
ALTER ROLE :"app" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT PASSWORD :'app_password';

SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'owner') WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
ALTER DATABASE :"db" OWNER TO :"owner";
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"owner";
GRANT CONNECT ON DATABASE :"db" TO :"app";

\connect :"db"
ALTER SCHEMA public OWNER TO :"owner";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app";

-- A database set up before these roles: every object of `public` goes to the owner (sequences that
-- belong to a column follow their table).
SELECT format('ALTER %s public.%I OWNER TO %I',
              CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
              c.relname, :'owner')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S') AND c.relowner <> :'owner'::regrole
   AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i'))
\gexec
SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, :'owner')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'public' AND p.proowner <> :'owner'::regrole
\gexec

-- What the owner creates from now on (the migrations), the app role may read and write.
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO :"app";
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO :"app";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO :"app";
-- The audit tables (those with an append-only guard, common/append_only.py): SELECT and INSERT only.
SELECT DISTINCT format('REVOKE UPDATE, DELETE, TRUNCATE ON public.%I FROM %I', c.relname, :'app')
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND NOT t.tgisinternal AND t.tgname LIKE '%\_append\_only%'
\gexec
SQL
