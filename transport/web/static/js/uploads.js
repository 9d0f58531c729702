// Files. The server serves an uploaded file at /user_uploads/REALM/PATH
// to requests with the API's credentials, which a link or an image in the
// page cannot carry; so the client asks the API for a temporary URL (GET
// /api/v1/user_uploads/REALM/PATH, valid for a minute, no credentials
// needed) and opens or shows that. Uploading (POST /user_uploads) goes
// through XMLHttpRequest, whose upload reports progress.

import { h } from './dom.js';

// uploadPath is the REALM/PATH of a link to an upload ("/user_uploads/2/ab/x.png"
// or "user_uploads/2/ab/x.png"), or null for any other link.
export function uploadPath(href) {
  const m = /^\/?user_uploads\/(\d+)\/([^?#\\]+)$/.exec(String(href || ''));
  if (!m) return null;
  const parts = m[2].split('/');
  if (parts[0] === 'temporary' || parts.some((p) => p === '' || p === '.' || p === '..' || /%2e%2e|%2f/i.test(p))) return null;
  return `${m[1]}/${m[2]}`;
}

const IMAGE = /\.(bmp|gif|jpe|jpeg|jpg|png|webp)$/i;

export function isImagePath(path) {
  return IMAGE.test(path);
}

export class Uploads {
  constructor(api) {
    this.api = api;
    this.cache = new Map(); // REALM/PATH -> {url, until}
  }

  forget() {
    this.cache.clear();
  }

  // temporaryURL resolves to a temporary URL of an upload, relative to
  // the page (kept for most of its minute).
  async temporaryURL(path) {
    const hit = this.cache.get(path);
    if (hit && hit.until > Date.now()) return hit.url;
    const body = await this.api.get(`/user_uploads/${path}`);
    const url = String(body.url || body.uri || '');
    if (!url.startsWith('/user_uploads/temporary/')) throw new Error('The server gave no temporary URL.');
    const rel = url.slice(1);
    this.cache.set(path, { url: rel, until: Date.now() + 45000 });
    return rel;
  }

  // open opens an upload in a new tab (an image) or downloads it.
  async open(path, notify) {
    try {
      const url = await this.temporaryURL(path);
      window.open(url, '_blank', 'noopener,noreferrer');
    } catch (err) {
      notify(`Could not open the file: ${err.message}`);
    }
  }

  // decorate finishes a message's content (not yet in the page): links to
  // uploaded images get a preview at the end, shown through a temporary URL.
  decorate(content) {
    const seen = new Set();
    const previews = [];
    for (const a of content.querySelectorAll('a[href]')) {
      const path = uploadPath(a.getAttribute('href'));
      if (!path || !isImagePath(path) || seen.has(path)) continue;
      seen.add(path);
      const img = h('img', { alt: a.textContent || 'image', class: 'preview', loading: 'lazy' });
      previews.push(h('div', { class: 'message_inline_image' },
        h('a', { href: a.getAttribute('href'), title: a.textContent || '' }, img)));
      this.temporaryURL(path).then((url) => { img.src = url; }).catch(() => {
        img.alt = `${img.alt} (could not be loaded)`;
      });
    }
    content.append(...previews);
  }

  // upload sends a file (POST /user_uploads) and resolves to {url, filename};
  // onProgress gets the fraction sent.
  upload(file, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `${this.api.base}/user_uploads`);
      if (this.api.auth) xhr.setRequestHeader('Authorization', this.api.auth);
      xhr.withCredentials = false;
      xhr.responseType = 'json';
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
      xhr.onload = () => {
        const body = xhr.response || {};
        if (xhr.status === 200 && body.result === 'success') resolve({ url: body.url || body.uri, filename: body.filename || file.name });
        else reject(new Error(body.msg || `HTTP ${xhr.status}`));
      };
      xhr.onerror = () => reject(new Error('The server could not be reached.'));
      const form = new FormData();
      form.append('file', file, file.name || 'pasted-image.png');
      xhr.send(form);
    });
  }
}
