// compat.mjs drives the real zulip-js client library (2.1.0, pinned in
// package.json) against a running server and checks every answer.
//
//   CHAT_SITE=http://127.0.0.1:8080 CHAT_EMAIL=owner@example.com \
//   CHAT_PASSWORD=... node compat.mjs
//
// CHAT_EMAIL must be an organization administrator (it creates a user).
// Optional: CHAT_REALM_URL, the organization URL server_settings must report.
// It prints one line per step and exits 1 at the first failure, naming the
// step and showing what the server answered. clients/zulipjs_test.go runs it.
//
// How zulip-js talks (read from node_modules/zulip-js/lib):
//   - zulip({username, password, realm}) POSTs multipart username+password to
//     {realm}/api/v1/fetch_api_key without Authorization, and keeps only
//     `api_key`. It does NOT throw when that fails: the client is returned
//     with config.apiKey undefined. accounts.retrieve() repeats the call and
//     returns the server's JSON, which is how a caller sees the error.
//   - Every other call sends Authorization: Basic base64(username:apiKey);
//     GET/DELETE/PATCH params go in the query string, POST params in a
//     multipart/form-data body (isomorphic-form-data).
//   - It never looks at the HTTP status: it resolves with response.json()
//     and throws only if the body is not JSON.
//   - The realm string is used verbatim: "http://h/" gives "http://h//api/v1".

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import process from 'node:process';
import zulip from 'zulip-js';

function env(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`compat.mjs: environment variable ${name} is required`);
    process.exit(2);
  }
  return v;
}

const site = env('CHAT_SITE').replace(/\/+$/, '');
const email = env('CHAT_EMAIL');
const password = env('CHAT_PASSWORD');
const realmURL = process.env.CHAT_REALM_URL || '';

const show = (v) => JSON.stringify(v);

// success asserts a zulip-js answer is a success and returns it.
function success(res, what) {
  assert.equal(typeof res, 'object', `${what}: expected a JSON object, got ${show(res)}`);
  assert.equal(res.result, 'success', `${what}: expected result "success", got ${show(res)}`);
  assert.equal(res.msg, '', `${what}: expected msg "", got ${show(res)}`);
  return res;
}

// failure asserts a zulip-js answer is an error with a code (that code, if
// given; none is required when code is null).
function failure(res, what, code) {
  assert.equal(typeof res, 'object', `${what}: expected a JSON object, got ${show(res)}`);
  assert.equal(res.result, 'error', `${what}: expected result "error", got ${show(res)}`);
  assert.equal(typeof res.msg, 'string', `${what}: expected a msg string, got ${show(res)}`);
  assert.ok(res.msg.length > 0, `${what}: expected a non-empty msg, got ${show(res)}`);
  if (code === null) {
    return res;
  }
  assert.equal(typeof res.code, 'string', `${what}: expected a code string, got ${show(res)}`);
  if (code) {
    assert.equal(res.code, code, `${what}: expected code ${code}, got ${show(res)}`);
  }
  return res;
}

let current = '';
let passed = 0;
async function step(name, fn) {
  current = name;
  const started = Date.now();
  await fn();
  passed += 1;
  console.log(`ok   ${name} (${Date.now() - started} ms)`);
}

function checkUser(u, want, what) {
  assert.equal(typeof u, 'object', `${what}: expected a user object, got ${show(u)}`);
  for (const [k, v] of Object.entries(want)) {
    assert.deepEqual(u[k], v, `${what}: ${k} should be ${show(v)}, got ${show(u)}`);
  }
  for (const k of ['user_id', 'email', 'full_name', 'role', 'is_admin', 'is_owner', 'is_bot', 'is_active']) {
    assert.ok(k in u, `${what}: field ${k} missing in ${show(u)}`);
  }
}

async function main() {
  const started = Date.now();
  let owner; // client made from email + password
  let me; // owner's own profile
  let ownerKey;

  await step('zulip({username, password, realm}) fetches the API key (POST /fetch_api_key, multipart)', async () => {
    owner = await zulip({ username: email, password, realm: site });
    ownerKey = owner.config.apiKey;
    assert.equal(typeof ownerKey, 'string', `no api_key from fetch_api_key: config is ${show(owner.config)}`);
    assert.ok(ownerKey.length >= 20, `api_key looks too short: ${show(ownerKey)}`);
    assert.equal(owner.config.apiURL, `${site}/api/v1`);
  });

  await step('accounts.retrieve() returns api_key, email, user_id', async () => {
    const res = success(await owner.accounts.retrieve(), 'accounts.retrieve');
    assert.equal(res.api_key, ownerKey, `fetch_api_key gave another key: ${show(res)}`);
    assert.equal(res.email, email, `fetch_api_key email: ${show(res)}`);
    assert.equal(typeof res.user_id, 'number', `fetch_api_key user_id: ${show(res)}`);
  });

  await step('users.me.getProfile() (GET /users/me)', async () => {
    me = success(await owner.users.me.getProfile(), 'users.me.getProfile');
    assert.equal(me.email, email, `email: ${show(me)}`);
    assert.equal(me.delivery_email, email, `delivery_email: ${show(me)}`);
    assert.ok(Number.isInteger(me.user_id) && me.user_id > 0, `user_id: ${show(me)}`);
    assert.ok([100, 200].includes(me.role), `role should be owner (100) or admin (200): ${show(me)}`);
    assert.equal(me.is_admin, true, `is_admin: ${show(me)}`);
    assert.equal(me.is_owner, me.role === 100, `is_owner vs role: ${show(me)}`);
    assert.equal(me.is_guest, false, `is_guest: ${show(me)}`);
    assert.equal(me.is_bot, false, `is_bot: ${show(me)}`);
    assert.equal(me.is_active, true, `is_active: ${show(me)}`);
    assert.equal(typeof me.full_name, 'string', `full_name: ${show(me)}`);
    assert.equal(typeof me.avatar_url, 'string', `avatar_url: ${show(me)}`);
    assert.equal(typeof me.date_joined, 'string', `date_joined: ${show(me)}`);
  });

  await step('zulip({username, apiKey, realm}) makes no login call and works', async () => {
    const cfg = { username: email, apiKey: ownerKey, realm: site };
    const byKey = await zulip(cfg);
    assert.equal(byKey.config.apiKey, ownerKey);
    const res = success(await byKey.users.me.getProfile(), 'getProfile with apiKey');
    assert.equal(res.user_id, me.user_id);
  });

  await step('realm with a trailing "/" (requests //api/v1/...): login, GET and POST', async () => {
    const slashed = await zulip({ username: email, password, realm: `${site}/` });
    assert.equal(slashed.config.apiURL, `${site}//api/v1`);
    assert.equal(slashed.config.apiKey, ownerKey, `fetch_api_key via //api/v1 failed: ${show(slashed.config)}`);
    const res = success(await slashed.users.me.getProfile(), 'getProfile via //api/v1');
    assert.equal(res.user_id, me.user_id);
    const settings = success(await slashed.server.settings(), 'server.settings via //api/v1');
    assert.equal(settings.authentication_methods?.password, true);
  });

  await step('realm ending in "/api" (zulip-js then appends only /v1)', async () => {
    const c = await zulip({ username: email, apiKey: ownerKey, realm: `${site}/api` });
    assert.equal(c.config.apiURL, `${site}/api/v1`);
    success(await c.users.me.getProfile(), 'getProfile with realm .../api');
  });

  await step('server.settings() (GET /server_settings)', async () => {
    const s = success(await owner.server.settings(), 'server.settings');
    assert.equal(s.authentication_methods?.password, true, `authentication_methods: ${show(s)}`);
    assert.ok(Array.isArray(s.external_authentication_methods), `external_authentication_methods: ${show(s)}`);
    assert.equal(s.email_auth_enabled, true, `email_auth_enabled: ${show(s)}`);
    assert.equal(s.require_email_format_usernames, true, `require_email_format_usernames: ${show(s)}`);
    assert.equal(typeof s.realm_name, 'string', `realm_name: ${show(s)}`);
    assert.equal(typeof s.realm_url, 'string', `realm_url: ${show(s)}`);
    assert.equal(s.realm_uri, s.realm_url, `realm_uri should equal realm_url: ${show(s)}`);
    if (realmURL) {
      assert.equal(s.realm_url, realmURL, `realm_url: ${show(s)}`);
    }
  });

  await step('callEndpoint("/server_settings") without credentials', async () => {
    // A client made from a key that is not valid still reaches the public endpoint.
    const anon = await zulip({ username: 'nobody@example.com', apiKey: 'x', realm: site });
    const s = success(await anon.callEndpoint('server_settings'), 'callEndpoint server_settings');
    assert.equal(s.authentication_methods?.password, true);
  });

  let members;
  await step('users.retrieve() (GET /users) lists the owner', async () => {
    const res = success(await owner.users.retrieve(), 'users.retrieve');
    assert.ok(Array.isArray(res.members), `members: ${show(res)}`);
    members = res.members;
    const found = members.find((u) => u.user_id === me.user_id);
    assert.ok(found, `owner ${me.user_id} missing from ${show(members)}`);
    checkUser(found, { email, full_name: me.full_name, role: me.role, is_active: true }, 'owner in users.retrieve');
  });

  await step('users.retrieve({client_gravatar: false}) sends query params', async () => {
    const res = success(await owner.users.retrieve({ client_gravatar: false }), 'users.retrieve client_gravatar=false');
    const found = res.members.find((u) => u.user_id === me.user_id);
    assert.equal(typeof found?.avatar_url, 'string', `client_gravatar=false must give an avatar_url: ${show(found)}`);
  });

  await step('callEndpoint GET /users/{id} and /users/{email}', async () => {
    const byID = success(await owner.callEndpoint(`/users/${me.user_id}`), 'GET /users/{id}');
    checkUser(byID.user, { user_id: me.user_id, email, role: me.role }, 'GET /users/{id}');

    // Path parameter repeated as a field, as clients do.
    const repeated = success(
      await owner.callEndpoint(`/users/${me.user_id}`, 'GET', { user_id: me.user_id }),
      'GET /users/{id}?user_id={id}',
    );
    assert.equal(repeated.user.user_id, me.user_id);

    const byEmail = success(await owner.callEndpoint(`/users/${email}`), 'GET /users/{email}');
    checkUser(byEmail.user, { user_id: me.user_id, email }, 'GET /users/{email}');

    const escaped = success(
      await owner.callEndpoint(`/users/${encodeURIComponent(email)}`),
      'GET /users/{percent-encoded email}',
    );
    assert.equal(escaped.user.user_id, me.user_id);

    failure(await owner.callEndpoint('/users/999999999'), 'GET /users/{unknown id}', 'BAD_REQUEST');
    failure(await owner.callEndpoint('/users/nobody-here@example.com'), 'GET /users/{unknown email}');
  });

  // A user made through zulip-js's users.create (POST /users, multipart).
  const tag = randomBytes(4).toString('hex');
  const newEmail = `zulipjs-${tag}@example.com`;
  const newName = `Zoë zulip-js ${tag}`;
  const newPassword = `pässword with spaces ${tag}`;
  let newUserID;

  await step('users.create({email, password, full_name}) (POST /users)', async () => {
    const res = success(
      await owner.users.create({ email: newEmail, password: newPassword, full_name: newName }),
      'users.create',
    );
    assert.ok(Number.isInteger(res.user_id) && res.user_id > 0, `user_id: ${show(res)}`);
    newUserID = res.user_id;
  });

  await step('users.create with a taken email fails', async () => {
    const res = failure(
      await owner.users.create({ email: newEmail, password: newPassword, full_name: newName }),
      'users.create duplicate',
      'BAD_REQUEST',
    );
    assert.match(res.msg, /already|in use|exists/i, `duplicate email message: ${show(res)}`);
  });

  await step('users.retrieve() lists the new user', async () => {
    const res = success(await owner.users.retrieve(), 'users.retrieve after create');
    assert.equal(res.members.length, members.length + 1, `expected one more member: ${show(res.members)}`);
    const found = res.members.find((u) => u.user_id === newUserID);
    assert.ok(found, `new user ${newUserID} missing from ${show(res.members)}`);
    checkUser(found, { email: newEmail, full_name: newName, role: 400, is_admin: false, is_owner: false, is_active: true }, 'new user');
  });

  let member;
  await step('the new user logs in with its password through zulip-js', async () => {
    member = await zulip({ username: newEmail, password: newPassword, realm: site });
    assert.equal(typeof member.config.apiKey, 'string', `no api_key for the new user: ${show(member.config)}`);
    assert.notEqual(member.config.apiKey, ownerKey);
    const prof = success(await member.users.me.getProfile(), 'new user getProfile');
    assert.equal(prof.user_id, newUserID);
    assert.equal(prof.email, newEmail);
    assert.equal(prof.full_name, newName);
    assert.equal(prof.role, 400);
    assert.equal(prof.is_admin, false);
    const byEmail = success(await member.callEndpoint(`/users/${email}`), 'member GET /users/{owner email}');
    assert.equal(byEmail.user.user_id, me.user_id);
  });

  await step('a member may not users.create', async () => {
    failure(
      await member.users.create({ email: `other-${newEmail}`, password: newPassword, full_name: 'Other' }),
      'users.create by a member',
    );
  });

  await step('callEndpoint POST /users/me/api_key/regenerate (empty multipart body)', async () => {
    const oldKey = member.config.apiKey;
    const res = success(await member.callEndpoint('/users/me/api_key/regenerate', 'POST'), 'regenerate');
    assert.equal(typeof res.api_key, 'string', `api_key: ${show(res)}`);
    assert.notEqual(res.api_key, oldKey, 'regenerate returned the old key');
    failure(await member.users.me.getProfile(), 'getProfile with the old key');
    const fresh = await zulip({ username: newEmail, apiKey: res.api_key, realm: site });
    success(await fresh.users.me.getProfile(), 'getProfile with the new key');
    const again = await zulip({ username: newEmail, password: newPassword, realm: site });
    assert.equal(again.config.apiKey, res.api_key, 'fetch_api_key does not give the regenerated key');
  });

  await step('stray parameters are ignored and listed (GET query, POST multipart)', async () => {
    const got = success(await owner.users.retrieve({ stray_get: 1 }), 'users.retrieve with a stray parameter');
    assert.deepEqual(got.ignored_parameters_unsupported, ['stray_get'], `ignored_parameters_unsupported: ${show({ ...got, members: '...' })}`);
    const made = success(
      await owner.users.create({ email: `stray-${newEmail}`, password: newPassword, full_name: `Stray ${tag}`, recipient: 'x' }),
      'users.create with a stray parameter',
    );
    assert.deepEqual(made.ignored_parameters_unsupported, ['recipient'], `ignored_parameters_unsupported: ${show(made)}`);
  });

  await step('wrong password: zulip() resolves without a key, accounts.retrieve() shows AUTHENTICATION_FAILED', async () => {
    const bad = await zulip({ username: email, password: `${password}-wrong`, realm: site });
    assert.equal(bad.config.apiKey, undefined, `wrong password gave a key: ${show(bad.config)}`);
    failure(await bad.accounts.retrieve(), 'accounts.retrieve with a wrong password', 'AUTHENTICATION_FAILED');
    // Calls with the missing key ("email:undefined") are refused too.
    failure(await bad.users.me.getProfile(), 'getProfile after a failed login');
    const unknown = await zulip({ username: `nobody-${tag}@example.com`, password, realm: site });
    failure(await unknown.accounts.retrieve(), 'accounts.retrieve for an unknown user', 'AUTHENTICATION_FAILED');
    // A success afterwards still works (and clears the failure count).
    const good = await zulip({ username: email, password, realm: site });
    assert.equal(good.config.apiKey, ownerKey);
  });

  await step('wrong API key: calls answer an error', async () => {
    const c = await zulip({ username: email, apiKey: 'a'.repeat(32), realm: site });
    failure(await c.users.me.getProfile(), 'getProfile with a wrong key');
    failure(await c.users.retrieve(), 'users.retrieve with a wrong key');
  });

  await step('unknown endpoint and wrong method answer JSON errors (zulip-js throws on non-JSON)', async () => {
    failure(await owner.callEndpoint('/no_such_endpoint'), 'GET /no_such_endpoint');
    // The reference's 405 body is {result, msg, allowed_methods}, no code.
    const res = failure(await owner.callEndpoint('/users', 'DELETE'), 'DELETE /users', null);
    assert.ok(res.allowed_methods?.includes('GET') && res.allowed_methods?.includes('POST'), `allowed_methods: ${show(res)}`);
  });

  // Channels. zulip-js POSTs `subscriptions`/`principals` as JSON in a
  // multipart body, but puts DELETE parameters in the query string with
  // arrays comma-joined (URLSearchParams stringifies them). Its form-data
  // stringifies numbers but throws on a boolean POST value (TypeError
  // ERR_INVALID_ARG_TYPE while sending): callers pass 'true' as a string.
  const pubName = `zulip-js ${tag} général`;
  const privName = `zulip-js ${tag} private`;
  const sharedName = `zulip-js ${tag} shared`;
  const mateName = `zulip-js ${tag} member's`;
  const ownerKeyStr = String(me.user_id);
  const mateKeyStr = String(newUserID);
  let mate; // the new user again: `member` holds the key regenerated above
  let pubID;
  let privID;
  let sharedID;
  let mateID;

  await step('users.me.subscriptions.add([{name, description}]) creates a public channel (POST /users/me/subscriptions)', async () => {
    mate = await zulip({ username: newEmail, password: newPassword, realm: site });
    assert.equal(typeof mate.config.apiKey, 'string', `no api_key for the new user: ${show(mate.config)}`);
    const res = success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: pubName, description: 'Everything *public*' }] }),
      'subscriptions.add public',
    );
    assert.deepEqual(res.subscribed, { [ownerKeyStr]: [pubName] }, `subscribed (keyed by user ID string): ${show(res)}`);
    assert.deepEqual(res.already_subscribed, {}, `already_subscribed: ${show(res)}`);
    const again = success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: pubName }] }),
      'subscriptions.add public again',
    );
    assert.deepEqual(again.subscribed, {}, `subscribed on a repeat: ${show(again)}`);
    assert.deepEqual(again.already_subscribed, { [ownerKeyStr]: [pubName] }, `already_subscribed on a repeat: ${show(again)}`);
  });

  await step("users.me.subscriptions.add({subscriptions, invite_only: 'true'}) creates a private channel", async () => {
    const res = success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: privName }], invite_only: 'true' }),
      'subscriptions.add private',
    );
    assert.deepEqual(res.subscribed, { [ownerKeyStr]: [privName] }, `subscribed: ${show(res)}`);
    assert.deepEqual(res.already_subscribed, {}, `already_subscribed: ${show(res)}`);
  });

  await step('users.me.subscriptions.add({subscriptions, principals: [owner id, member id]})', async () => {
    const res = success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: sharedName }], principals: [me.user_id, newUserID] }),
      'subscriptions.add with principals',
    );
    assert.deepEqual(res.subscribed, { [ownerKeyStr]: [sharedName], [mateKeyStr]: [sharedName] }, `subscribed: ${show(res)}`);
    assert.deepEqual(res.already_subscribed, {}, `already_subscribed: ${show(res)}`);
    // Principals by email: both already subscribed.
    const again = success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: sharedName }], principals: [newEmail, me.email] }),
      'subscriptions.add with email principals',
    );
    // Emails and IDs may not be mixed (the reference's list[str] | list[int]).
    const mixed = await owner.users.me.subscriptions.add({ subscriptions: [{ name: sharedName }], principals: [newEmail, me.user_id] });
    assert.equal(mixed.result, 'error', `mixed principals: ${show(mixed)}`);
    assert.equal(mixed.msg, 'principals["list[str]"][1] is not a string', `mixed principals: ${show(mixed)}`);
    assert.deepEqual(again.subscribed, {}, `subscribed on a repeat: ${show(again)}`);
    assert.deepEqual(again.already_subscribed, { [ownerKeyStr]: [sharedName], [mateKeyStr]: [sharedName] }, `already_subscribed: ${show(again)}`);
    failure(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: sharedName }], principals: [999999999] }),
      'subscriptions.add with an unknown principal',
      'BAD_REQUEST',
    );
  });

  await step('streams.retrieve() (GET /streams) lists the new channels', async () => {
    const res = success(await owner.streams.retrieve(), 'streams.retrieve');
    assert.ok(Array.isArray(res.streams), `streams: ${show(res)}`);
    const byName = (n) => res.streams.find((s) => s.name === n);
    for (const [n, inviteOnly] of [[pubName, false], [privName, true], [sharedName, false]]) {
      const s = byName(n);
      assert.ok(s, `${n} missing from ${show(res.streams)}`);
      assert.ok(Number.isInteger(s.stream_id) && s.stream_id > 0, `stream_id: ${show(s)}`);
      assert.equal(s.invite_only, inviteOnly, `invite_only of ${n}: ${show(s)}`);
      assert.equal(s.creator_id, me.user_id, `creator_id of ${n}: ${show(s)}`);
      assert.equal(s.is_archived, false, `is_archived of ${n}: ${show(s)}`);
      for (const k of ['description', 'rendered_description', 'date_created', 'is_web_public', 'history_public_to_subscribers', 'can_administer_channel_group']) {
        assert.ok(k in s, `field ${k} missing in ${show(s)}`);
      }
    }
    pubID = byName(pubName).stream_id;
    privID = byName(privName).stream_id;
    sharedID = byName(sharedName).stream_id;
    assert.equal(byName(pubName).description, 'Everything *public*', `description: ${show(byName(pubName))}`);
    assert.match(byName(pubName).rendered_description, /<em>public<\/em>/, `rendered_description: ${show(byName(pubName))}`);

    // The member sees the public channels but not the private one.
    const seen = success(await mate.streams.retrieve(), 'member streams.retrieve');
    const names = seen.streams.map((s) => s.name);
    assert.ok(names.includes(pubName) && names.includes(sharedName), `member should see public channels: ${show(names)}`);
    assert.ok(!names.includes(privName), `member should not see the private channel: ${show(names)}`);
  });

  await step('callEndpoint GET /streams/{id}; a private channel is hidden from a non-subscriber', async () => {
    const res = success(await owner.callEndpoint(`/streams/${pubID}`), 'GET /streams/{id}');
    assert.equal(res.stream?.stream_id, pubID, `stream: ${show(res)}`);
    assert.equal(res.stream.name, pubName, `name: ${show(res)}`);
    assert.equal(res.stream.invite_only, false, `invite_only: ${show(res)}`);
    const priv = success(await owner.callEndpoint(`/streams/${privID}`), 'GET /streams/{private id}');
    assert.equal(priv.stream?.invite_only, true, `invite_only: ${show(priv)}`);
    failure(await mate.callEndpoint(`/streams/${privID}`), 'member GET /streams/{private id}', 'BAD_REQUEST');
    failure(await owner.callEndpoint('/streams/999999999'), 'GET /streams/{unknown id}', 'BAD_REQUEST');
  });

  await step('streams.getStreamId(name) and ({stream}) (GET /get_stream_id); an unknown name fails', async () => {
    const byString = success(await owner.streams.getStreamId(pubName), 'streams.getStreamId(string)');
    assert.equal(byString.stream_id, pubID, `stream_id: ${show(byString)}`);
    const byObject = success(await mate.streams.getStreamId({ stream: sharedName }), 'streams.getStreamId({stream})');
    assert.equal(byObject.stream_id, sharedID, `stream_id: ${show(byObject)}`);
    const res = failure(await owner.streams.getStreamId(`no such channel ${tag}`), 'streams.getStreamId(unknown)', 'BAD_REQUEST');
    assert.match(res.msg, /channel|stream/i, `unknown channel message: ${show(res)}`);
  });

  await step('streams.subscriptions.retrieve({include_subscribers: true}) (GET /users/me/subscriptions)', async () => {
    const res = success(await owner.streams.subscriptions.retrieve({ include_subscribers: true }), 'subscriptions.retrieve');
    assert.ok(Array.isArray(res.subscriptions), `subscriptions: ${show(res)}`);
    const shared = res.subscriptions.find((s) => s.stream_id === sharedID);
    assert.ok(shared, `${sharedName} missing from ${show(res.subscriptions)}`);
    assert.equal(shared.name, sharedName);
    assert.deepEqual([...shared.subscribers].sort((a, b) => a - b), [me.user_id, newUserID].sort((a, b) => a - b), `subscribers: ${show(shared)}`);
    assert.match(shared.color, /^#[0-9a-f]{6}$/i, `color: ${show(shared)}`);
    assert.equal(shared.is_muted, false, `is_muted: ${show(shared)}`);
    assert.equal(shared.in_home_view, true, `in_home_view: ${show(shared)}`);
    const pub = res.subscriptions.find((s) => s.stream_id === pubID);
    assert.deepEqual(pub?.subscribers, [me.user_id], `subscribers of ${pubName}: ${show(pub)}`);
    assert.ok(res.subscriptions.some((s) => s.stream_id === privID), `private channel missing from ${show(res.subscriptions)}`);

    const plain = success(await owner.streams.subscriptions.retrieve(), 'subscriptions.retrieve without include_subscribers');
    const s = plain.subscriptions.find((x) => x.stream_id === sharedID);
    assert.ok(s && !('subscribers' in s), `subscribers listed without include_subscribers: ${show(s)}`);

    const mine = success(await mate.streams.subscriptions.retrieve(), 'member subscriptions.retrieve');
    const mineIDs = mine.subscriptions.map((x) => x.stream_id);
    assert.ok(mineIDs.includes(sharedID), `member should be subscribed to ${sharedName}: ${show(mine)}`);
    assert.ok(!mineIDs.includes(pubID) && !mineIDs.includes(privID), `member subscribed to the owner's channels: ${show(mine)}`);
  });

  await step('callEndpoint POST /users/me/subscriptions/properties (color, is_muted)', async () => {
    success(
      await owner.callEndpoint('/users/me/subscriptions/properties', 'POST', {
        subscription_data: [
          { stream_id: sharedID, property: 'color', value: '#1a2b3c' },
          { stream_id: sharedID, property: 'is_muted', value: true },
        ],
      }),
      'subscriptions/properties',
    );
    const res = success(await owner.streams.subscriptions.retrieve(), 'subscriptions.retrieve after properties');
    const s = res.subscriptions.find((x) => x.stream_id === sharedID);
    assert.equal(s?.color, '#1a2b3c', `color: ${show(s)}`);
    assert.equal(s.is_muted, true, `is_muted: ${show(s)}`);
    assert.equal(s.in_home_view, false, `in_home_view should be the inverse of is_muted: ${show(s)}`);
    // Only the owner's subscription changed.
    const other = success(await mate.streams.subscriptions.retrieve(), 'member subscriptions.retrieve after properties');
    const theirs = other.subscriptions.find((x) => x.stream_id === sharedID);
    assert.equal(theirs?.is_muted, false, `member's is_muted: ${show(other)}`);
    failure(
      await owner.callEndpoint('/users/me/subscriptions/properties', 'POST', {
        subscription_data: [{ stream_id: sharedID, property: 'volume', value: 1 }],
      }),
      'subscriptions/properties with an unknown property',
      'BAD_REQUEST',
    );
  });

  await step('callEndpoint POST /user_topics mutes a topic', async () => {
    success(
      await owner.callEndpoint('/user_topics', 'POST', { stream_id: sharedID, topic: `lunch ☕ ${tag}`, visibility_policy: 1 }),
      'POST /user_topics mute',
    );
    success(
      await owner.callEndpoint('/user_topics', 'POST', { stream_id: sharedID, topic: `lunch ☕ ${tag}`, visibility_policy: 0 }),
      'POST /user_topics unmute',
    );
    failure(
      await owner.callEndpoint('/user_topics', 'POST', { stream_id: sharedID, topic: 'lunch' }),
      'POST /user_topics without visibility_policy',
      'REQUEST_VARIABLE_MISSING',
    );
  });

  await step('callEndpoint PATCH /streams/{id} (description in the query string) by the creator, a member', async () => {
    const made = success(await mate.users.me.subscriptions.add({ subscriptions: [{ name: mateName }] }), 'member subscriptions.add');
    assert.deepEqual(made.subscribed, { [mateKeyStr]: [mateName] }, `subscribed: ${show(made)}`);
    mateID = success(await mate.streams.getStreamId(mateName), 'member getStreamId').stream_id;

    success(await mate.callEndpoint(`/streams/${mateID}`, 'PATCH', { description: 'Now **bold** & new' }), 'PATCH /streams/{id} by the creator');
    const res = success(await mate.callEndpoint(`/streams/${mateID}`), 'GET /streams/{id} after PATCH');
    assert.equal(res.stream?.creator_id, newUserID, `creator_id: ${show(res)}`);
    assert.equal(res.stream.description, 'Now **bold** & new', `description: ${show(res)}`);
    assert.match(res.stream.rendered_description, /<strong>bold<\/strong>/, `rendered_description: ${show(res)}`);

    // The member did not create the shared channel and is no administrator.
    failure(await mate.callEndpoint(`/streams/${sharedID}`, 'PATCH', { description: 'mine' }), 'member PATCH of a channel it does not administer', 'BAD_REQUEST');
  });

  await step('streams.deleteById({stream_id}) archives a channel (DELETE /streams/{id})', async () => {
    success(await mate.streams.deleteById({ stream_id: mateID }), 'streams.deleteById by the creator');
    const res = success(await mate.callEndpoint(`/streams/${mateID}`), 'GET /streams/{id} after archiving');
    assert.equal(res.stream?.is_archived, true, `is_archived: ${show(res)}`);
    const list = success(await mate.streams.retrieve(), 'streams.retrieve after archiving');
    assert.ok(!list.streams.some((s) => s.stream_id === mateID), `archived channel listed by default: ${show(list.streams)}`);
    failure(await mate.streams.deleteById({ stream_id: mateID }), 'streams.deleteById again');
    failure(await mate.streams.deleteById({ stream_id: sharedID }), 'streams.deleteById by a non-administrator', 'BAD_REQUEST');
  });

  await step('users.me.subscriptions.remove({subscriptions: [a, b]}) (DELETE, comma-joined query) gives removed/not_removed', async () => {
    const res = success(
      await owner.users.me.subscriptions.remove({ subscriptions: [pubName, privName] }),
      'subscriptions.remove',
    );
    assert.deepEqual([...res.removed].sort(), [pubName, privName].sort(), `removed: ${show(res)}`);
    assert.deepEqual(res.not_removed, [], `not_removed: ${show(res)}`);
    // A caller that JSON-encodes the list itself.
    const again = success(
      await owner.users.me.subscriptions.remove({ subscriptions: JSON.stringify([pubName]) }),
      'subscriptions.remove again (JSON list)',
    );
    assert.deepEqual(again.removed, [], `removed on a repeat: ${show(again)}`);
    assert.deepEqual(again.not_removed, [pubName], `not_removed on a repeat: ${show(again)}`);
    const mine = success(await owner.streams.subscriptions.retrieve(), 'subscriptions.retrieve after remove');
    const ids = mine.subscriptions.map((s) => s.stream_id);
    assert.ok(!ids.includes(pubID) && !ids.includes(privID), `still subscribed: ${show(ids)}`);
    assert.ok(ids.includes(sharedID), `shared channel lost: ${show(ids)}`);

    const unknown = failure(
      await owner.users.me.subscriptions.remove({ subscriptions: [`no such channel ${tag}`] }),
      'subscriptions.remove of an unknown channel',
      'STREAM_DOES_NOT_EXIST',
    );
    assert.equal(unknown.stream, `no such channel ${tag}`, `stream: ${show(unknown)}`);
  });

  await step('users.me.subscriptions.remove({subscriptions, principals}) by an administrator', async () => {
    // zulip-js's own form: principals: [id] goes out comma-joined in the
    // query string (?principals=7).
    const res = success(
      await owner.users.me.subscriptions.remove({ subscriptions: [sharedName], principals: [newUserID] }),
      'subscriptions.remove with principals',
    );
    assert.deepEqual(res.removed, [sharedName], `removed: ${show(res)}`);
    assert.deepEqual(res.not_removed, [], `not_removed: ${show(res)}`);
    const theirs = success(await mate.streams.subscriptions.retrieve(), 'member subscriptions.retrieve after remove');
    assert.ok(!theirs.subscriptions.some((s) => s.stream_id === sharedID), `member still subscribed: ${show(theirs)}`);
    const mine = success(await owner.streams.subscriptions.retrieve({ include_subscribers: true }), 'owner subscriptions.retrieve');
    assert.deepEqual(mine.subscriptions.find((s) => s.stream_id === sharedID)?.subscribers, [me.user_id], `subscribers: ${show(mine)}`);
  });

  // User groups (no zulip-js methods: callEndpoint throughout).
  const groupName = `zulip-js ${tag} helpers`;
  let groupID;

  await step('callEndpoint POST /user_groups/create (members as a JSON list)', async () => {
    const res = success(
      await owner.callEndpoint('/user_groups/create', 'POST', { name: groupName, description: 'Helps ✓', members: [newUserID] }),
      'POST /user_groups/create',
    );
    assert.ok(Number.isInteger(res.group_id) && res.group_id > 0, `group_id: ${show(res)}`);
    groupID = res.group_id;
    failure(
      await owner.callEndpoint('/user_groups/create', 'POST', { name: `${groupName} bad`, description: '', members: [999999999] }),
      'POST /user_groups/create with an unknown member',
      'BAD_REQUEST',
    );
    failure(
      await owner.callEndpoint('/user_groups/create', 'POST', { name: `${groupName} none`, description: '' }),
      'POST /user_groups/create without members',
      'REQUEST_VARIABLE_MISSING',
    );
  });

  await step('callEndpoint GET /user_groups lists the group', async () => {
    const res = success(await mate.callEndpoint('/user_groups'), 'GET /user_groups');
    assert.ok(Array.isArray(res.user_groups), `user_groups: ${show(res)}`);
    const g = res.user_groups.find((x) => x.id === groupID);
    assert.ok(g, `group ${groupID} missing from ${show(res.user_groups)}`);
    assert.equal(g.name, groupName, `name: ${show(g)}`);
    assert.equal(g.description, 'Helps ✓', `description: ${show(g)}`);
    assert.deepEqual(g.members, [newUserID], `members: ${show(g)}`);
    assert.equal(g.is_system_group, false, `is_system_group: ${show(g)}`);
    assert.ok(res.user_groups.some((x) => x.is_system_group), `no system groups in ${show(res.user_groups)}`);
  });

  await step('callEndpoint POST /user_groups/{id}/members (add, delete), GET members and members/{user_id}', async () => {
    const base = `/user_groups/${groupID}`;
    success(await owner.callEndpoint(`${base}/members`, 'POST', { add: [me.user_id] }), 'POST members add');
    const res = success(await mate.callEndpoint(`${base}/members`), 'GET members');
    assert.deepEqual([...res.members].sort((a, b) => a - b), [me.user_id, newUserID].sort((a, b) => a - b), `members: ${show(res)}`);
    const isMember = success(await mate.callEndpoint(`${base}/members/${me.user_id}`), 'GET members/{user_id}');
    assert.equal(isMember.is_user_group_member, true, `is_user_group_member: ${show(isMember)}`);

    success(await owner.callEndpoint(`${base}/members`, 'POST', { delete: [newUserID] }), 'POST members delete');
    const after = success(await owner.callEndpoint(`${base}/members`), 'GET members after delete');
    assert.deepEqual(after.members, [me.user_id], `members after delete: ${show(after)}`);
    const notMember = success(await owner.callEndpoint(`${base}/members/${newUserID}`), 'GET members/{removed user_id}');
    assert.equal(notMember.is_user_group_member, false, `is_user_group_member: ${show(notMember)}`);
    failure(await owner.callEndpoint('/user_groups/999999999/members'), 'GET /user_groups/{unknown}/members', 'BAD_REQUEST');
  });

  const msgName = `zulip-js ${tag} messages`;
  let msgChannelID;
  await step('messages.send to a channel in every "to" form (name, JSON name, one-element list, ID)', async () => {
    success(
      await owner.users.me.subscriptions.add({ subscriptions: [{ name: msgName }], principals: [email, newEmail] }),
      'subscriptions.add for messages',
    );
    const idRes = success(await owner.streams.getStreamId(msgName), 'streams.getStreamId');
    msgChannelID = idRes.stream_id;
    for (const to of [msgName, JSON.stringify(msgName), JSON.stringify([msgName]), msgChannelID]) {
      const res = success(await owner.messages.send({ type: 'stream', to, topic: 'zulip-js', content: `to ${to}` }), `messages.send to ${to}`);
      assert.ok(res.id > 0, `id: ${show(res)}`);
    }
    const legacy = success(await owner.messages.send({ type: 'stream', to: msgName, subject: 'legacy', content: 'subject works' }), 'send with subject');
    assert.ok(legacy.id > 0);
  });

  await step('messages.send direct messages (IDs, emails, comma-separated emails)', async () => {
    for (const to of [[newUserID], [newEmail], `${newEmail}`]) {
      const res = success(await owner.messages.send({ type: 'private', to, content: 'psst' }), `messages.send private to ${show(to)}`);
      assert.ok(res.id > 0, `id: ${show(res)}`);
    }
    failure(await owner.messages.send({ type: 'private', to: ['nobody@example.invalid'], content: 'x' }), 'send to an unknown email', 'BAD_REQUEST');
  });

  await step('messages.retrieve with narrows (channel + topic, is:dm, search) and anchors', async () => {
    const byTopic = success(
      await mate.messages.retrieve({ anchor: 'newest', num_before: 20, num_after: 0,
        narrow: [{ operator: 'channel', operand: msgName }, { operator: 'topic', operand: 'zulip-js' }] }),
      'messages.retrieve channel + topic',
    );
    assert.equal(byTopic.messages.length, 4, `messages: ${show(byTopic)}`);
    assert.ok(byTopic.found_oldest, `found_oldest: ${show(byTopic)}`);
    assert.equal(byTopic.messages[0].display_recipient, msgName);
    const dms = success(await mate.messages.retrieve({ anchor: 'newest', num_before: 10, narrow: [['is', 'private']] }), 'is:private (legacy pair)');
    assert.equal(dms.messages.length, 3, `dms: ${show(dms)}`);
    assert.deepEqual(dms.messages[0].flags, [], 'unread for the recipient');
    const found = success(await mate.messages.retrieve({ anchor: 'newest', num_before: 10, narrow: [{ operator: 'search', operand: 'subject works' }] }), 'search');
    assert.equal(found.messages.length, 1, `search: ${show(found)}`);
    const bad = await mate.messages.retrieve({ anchor: 'newest', narrow: [{ operator: 'channel', operand: 'no such channel at all' }] });
    assert.equal(bad.code, 'BAD_NARROW', `bad narrow: ${show(bad)}`);
  });

  const topicNarrow = [{ operator: 'channel', operand: msgName }, { operator: 'topic', operand: 'zulip-js' }];
  let topicIDs;
  await step('reactions.add / reactions.remove (POST, DELETE /messages/{id}/reactions) by name; a duplicate fails', async () => {
    const got = success(await mate.messages.retrieve({ anchor: 'newest', num_before: 20, num_after: 0, narrow: topicNarrow }), 'retrieve topic');
    topicIDs = got.messages.map((m) => m.id);
    const id = topicIDs[0];
    success(await mate.reactions.add({ message_id: id, emoji_name: 'octopus' }), 'reactions.add');
    failure(await mate.reactions.add({ message_id: id, emoji_name: 'octopus' }), 'reactions.add again', 'REACTION_ALREADY_EXISTS');
    const one = success(await owner.messages.getById({ message_id: id }), 'messages.getById');
    assert.deepEqual(one.message.reactions, [{ emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: newUserID }],
      `reactions: ${show(one.message.reactions)}`);
    success(await mate.reactions.remove({ message_id: id, emoji_name: 'octopus' }), 'reactions.remove');
    failure(await mate.reactions.remove({ message_id: id, emoji_name: 'octopus' }), 'reactions.remove again', 'REACTION_DOES_NOT_EXIST');
  });

  await step('messages.flags.add / remove (POST /messages/flags): starred and read', async () => {
    const [a, b] = topicIDs;
    const starred = success(await mate.messages.flags.add({ flag: 'starred', messages: [a] }), 'flags.add starred');
    assert.deepEqual(starred.messages, [a]);
    success(await mate.messages.flags.add({ flag: 'read', messages: [a, b] }), 'flags.add read');
    const got = success(await mate.messages.getById({ message_id: a }), 'getById after flags');
    assert.deepEqual(got.message.flags, ['read', 'starred'], `flags: ${show(got.message.flags)}`);
    success(await mate.messages.flags.remove({ flag: 'read', messages: [a] }), 'flags.remove read');
    const again = success(await mate.messages.getById({ message_id: a }), 'getById after remove');
    assert.deepEqual(again.message.flags, ['starred'], `flags: ${show(again.message.flags)}`);
    failure(await mate.messages.flags.add({ flag: 'mentioned', messages: [a] }), 'flags.add mentioned', 'BAD_REQUEST');
  });

  await step('messages.update (PATCH /messages/{id}): content, then the topic with change_all; getHistoryById', async () => {
    const sent = success(await owner.messages.send({ type: 'stream', to: msgName, topic: 'edit me', content: 'first draft' }), 'send to edit');
    success(await owner.messages.update({ message_id: sent.id, content: 'second **draft**' }), 'messages.update content');
    const edited = success(await mate.messages.getById({ message_id: sent.id }), 'getById edited');
    assert.equal(edited.message.content, '<p>second <strong>draft</strong></p>');
    assert.ok(edited.message.last_edit_timestamp > 0, `last_edit_timestamp: ${show(edited.message)}`);
    failure(await mate.messages.update({ message_id: sent.id, content: 'not mine' }), 'update by another user', 'BAD_REQUEST');
    success(await owner.messages.update({ message_id: sent.id, topic: 'edited', propagate_mode: 'change_all' }), 'messages.update topic');
    const moved = success(await mate.messages.getById({ message_id: sent.id }), 'getById moved');
    assert.equal(moved.message.subject, 'edited');
    const hist = success(await mate.messages.getHistoryById({ message_id: sent.id }), 'getHistoryById');
    assert.equal(hist.message_history.length, 3, `history: ${show(hist)}`);
    assert.equal(hist.message_history[0].content, 'first draft');
  });

  await step('mark as read: /mark_topic_as_read, /mark_stream_as_read, /mark_all_as_read', async () => {
    success(await mate.callEndpoint('/mark_topic_as_read', 'POST', { stream_id: msgChannelID, topic_name: 'zulip-js' }), 'mark_topic_as_read');
    success(await mate.callEndpoint('/mark_stream_as_read', 'POST', { stream_id: msgChannelID }), 'mark_stream_as_read');
    const all = success(await mate.callEndpoint('/mark_all_as_read', 'POST', {}), 'mark_all_as_read');
    assert.equal(all.complete, true, `complete: ${show(all)}`);
    const unread = success(await mate.messages.retrieve({ anchor: 'newest', num_before: 50, narrow: [['is', 'unread']] }), 'is:unread');
    assert.equal(unread.messages.length, 0, `unread: ${show(unread)}`);
  });

  await step('messages.deleteById (DELETE /messages/{id}); then it is gone', async () => {
    const sent = success(await owner.messages.send({ type: 'stream', to: msgName, topic: 'delete me', content: 'oops' }), 'send to delete');
    failure(await mate.messages.deleteById({ message_id: sent.id }), 'delete by another member', 'BAD_REQUEST');
    success(await owner.messages.deleteById({ message_id: sent.id }), 'messages.deleteById');
    failure(await owner.messages.getById({ message_id: sent.id }), 'getById deleted', 'BAD_REQUEST');
  });

  await step('queues.register, events.retrieve (dont_block), queues.deregister; a deleted queue is BAD_EVENT_QUEUE_ID', async () => {
    const reg = success(await mate.queues.register({ event_types: ['message'] }), 'queues.register');
    assert.equal(typeof reg.queue_id, 'string', `queue_id: ${show(reg)}`);
    assert.equal(reg.last_event_id, -1, `last_event_id: ${show(reg)}`);
    assert.equal(typeof reg.max_message_id, 'number', `max_message_id: ${show(reg)}`);
    const none = success(await mate.events.retrieve({ queue_id: reg.queue_id, last_event_id: -1, dont_block: true }), 'events.retrieve');
    assert.deepEqual(none.events, [], `events: ${show(none)}`);
    success(await mate.queues.deregister({ queue_id: reg.queue_id }), 'queues.deregister');
    const gone = failure(await mate.events.retrieve({ queue_id: reg.queue_id, last_event_id: -1 }), 'retrieve from a deleted queue', 'BAD_EVENT_QUEUE_ID');
    assert.equal(gone.queue_id, reg.queue_id, `queue_id: ${show(gone)}`);
  });

  await step('callOnEachEvent receives a message, a reaction and a subscription change (POST /register, long-poll GET /events)', async () => {
    const seen = [];
    // callOnEachEvent registers, then long-polls forever; it is left
    // running and the process exits at the end.
    mate.callOnEachEvent((ev) => seen.push(ev), ['message', 'reaction', 'subscription']);
    const until = async (what, pred) => {
      const deadline = Date.now() + 10000;
      while (Date.now() < deadline) {
        const hit = seen.find(pred);
        if (hit) {
          return hit;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`callOnEachEvent: no ${what} event within 10 s; saw ${show(seen)}`);
    };
    // The queue exists once a message sent now arrives; keep sending
    // until one does (registration is asynchronous).
    let msg;
    for (let i = 0; !msg && i < 50; i += 1) {
      const sent = success(await owner.messages.send({ type: 'stream', to: msgName, topic: 'events', content: `event ${i}` }), 'send');
      msg = await until('message', (ev) => ev.type === 'message' && ev.message.id === sent.id).catch(() => null);
    }
    assert.ok(msg, `no message event: ${show(seen)}`);
    assert.equal(msg.message.display_recipient, msgName);
    assert.ok(Array.isArray(msg.flags), `flags: ${show(msg)}`);
    success(await owner.reactions.add({ message_id: msg.message.id, emoji_name: 'octopus' }), 'reactions.add');
    const reaction = await until('reaction', (ev) => ev.type === 'reaction' && ev.message_id === msg.message.id);
    assert.equal(reaction.op, 'add');
    assert.equal(reaction.emoji_name, 'octopus');
    const fresh = `zulip-js ${tag} events`;
    success(await owner.users.me.subscriptions.add({ subscriptions: [{ name: fresh }], principals: [newEmail] }), 'subscribe the member');
    const sub = await until('subscription', (ev) => ev.type === 'subscription' && ev.op === 'add');
    assert.equal(sub.subscriptions[0].name, fresh, `subscription: ${show(sub)}`);
    const ids = seen.map((ev) => ev.id);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), `event ids increase: ${show(ids)}`);
  });

  console.log(`\n${passed} passed, 0 failed (zulip-js against ${site}, ${Date.now() - started} ms)`);
  process.exit(0); // callOnEachEvent never returns
}

main().catch((err) => {
  console.error(`\nFAIL ${current}`);
  console.error(err && err.stack ? err.stack : err);
  if (err && err.res) {
    console.error(`HTTP ${err.res.status} ${err.res.url}`);
  }
  console.error(`\n${passed} passed, 1 failed`);
  process.exit(1);
});
