// Drafts: what the message box holds, kept per view (its text, and where
// it was going) while the person looks elsewhere, for the tab's life:
// in sessionStorage, like the session, and forgotten by logging out.

const KEY = 'teamchat.drafts';

export class Drafts {
  constructor() {
    try {
      this.all = new Map(Object.entries(JSON.parse(sessionStorage.getItem(KEY) || '{}')));
    } catch {
      this.all = new Map();
    }
  }

  static key(view) {
    switch (view.kind) {
      case 'channel': return `c${view.streamId}`;
      case 'topic': return `t${view.streamId}:${String(view.topic).toLowerCase()}`;
      case 'dm': return `d${view.userIds.join(',')}`;
      default: return view.kind;
    }
  }

  get(view) {
    return this.all.get(Drafts.key(view)) || null;
  }

  // set keeps a view's draft; one with no text keeps only where it went.
  set(view, draft) {
    this.all.set(Drafts.key(view), draft);
    this.save();
  }

  save() {
    try {
      sessionStorage.setItem(KEY, JSON.stringify(Object.fromEntries(this.all)));
    } catch {
      // Full or refused: the drafts stay in memory.
    }
  }

  static forget() {
    sessionStorage.removeItem(KEY);
  }
}
