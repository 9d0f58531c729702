// The REST API, as any client calls it: HTTP Basic with the email and API
// key, parameters form-encoded (lists and objects as JSON), answers in
// the {result, msg, code} envelope. Paths are relative to the page, so
// the client works wherever a host mounts it beside the API.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.msg ? body.msg : `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || '';
    this.body = body || {};
  }
}

export class Api {
  constructor(base = 'api/v1') {
    this.base = base;
    this.auth = '';
  }

  setCredentials(email, key) {
    this.auth = email ? 'Basic ' + base64(`${email}:${key}`) : '';
  }

  // call sends one request; params go to the query of a GET and to the
  // form body otherwise. It resolves to the answer's body, or rejects with
  // an ApiError (or the network's TypeError, or an AbortError).
  async call(method, path, params = {}, { signal } = {}) {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined) continue;
      form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    let url = `${this.base}${path}`;
    const init = {
      method,
      signal,
      headers: {},
      // No cookies, and no browser login prompt on a 401.
      credentials: 'omit',
      cache: 'no-store',
    };
    if (this.auth) init.headers.Authorization = this.auth;
    if (method === 'GET') {
      const q = form.toString();
      if (q) url += '?' + q;
    } else {
      init.body = form;
    }
    return answer(await fetch(url, init));
  }

  // upload posts a multipart form (a file) and resolves to the answer.
  async upload(path, form) {
    const resp = await fetch(`${this.base}${path}`, {
      method: 'POST', body: form, credentials: 'omit', cache: 'no-store',
      headers: this.auth ? { Authorization: this.auth } : {},
    });
    return answer(resp);
  }

  get(path, params, opts) { return this.call('GET', path, params, opts); }
  post(path, params, opts) { return this.call('POST', path, params, opts); }
  patch(path, params, opts) { return this.call('PATCH', path, params, opts); }
  del(path, params, opts) { return this.call('DELETE', path, params, opts); }
}

// answer is a response's body, or an ApiError.
async function answer(resp) {
  let body = null;
  try {
    body = await resp.json();
  } catch {
    // not JSON: reported below
  }
  if (!resp.ok || !body || body.result !== 'success') throw new ApiError(resp.status, body);
  return body;
}

// base64 of a string's UTF-8 bytes (btoa alone takes Latin-1 only).
function base64(s) {
  let bin = '';
  for (const b of new TextEncoder().encode(s)) bin += String.fromCharCode(b);
  return btoa(bin);
}

// The session lives in sessionStorage: it is kept for the tab (and its
// reloads) and forgotten by logging out or closing the tab.
const SESSION_KEY = 'teamchat.session';

export function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) || 'null');
    return s && s.email && s.key ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(s) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
}

export function forgetSession() {
  sessionStorage.removeItem(SESSION_KEY);
}
