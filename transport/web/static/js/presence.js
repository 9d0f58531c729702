// Presence: the person's own, reported every ping interval ("active"
// while they used the page in the last five minutes and it is in view,
// "idle" otherwise), and everyone's, which comes back with each report.

export class Presence {
  constructor(api, model, { onChange }) {
    this.api = api;
    this.model = model;
    this.onChange = onChange;
    this.timer = null;
    this.lastInput = Date.now();
    this.inputSincePing = true;
    for (const type of ['keydown', 'pointerdown', 'pointermove', 'wheel', 'focus']) {
      window.addEventListener(type, () => {
        this.lastInput = Date.now();
        this.inputSincePing = true;
      }, { passive: true, capture: true });
    }
  }

  // start reports now and then every ping interval of the server.
  start() {
    this.ping();
    clearInterval(this.timer);
    this.timer = setInterval(() => this.ping(), this.model.pingEvery);
  }

  stop() {
    clearInterval(this.timer);
  }

  async ping() {
    const active = document.visibilityState === 'visible' && Date.now() - this.lastInput < 5 * 60 * 1000;
    const fresh = this.inputSincePing;
    this.inputSincePing = false;
    try {
      const body = await this.api.post('/users/me/presence', {
        status: active ? 'active' : 'idle',
        new_user_input: fresh,
        slim_presence: true,
      });
      this.model.noteServerTime(body.server_timestamp);
      if (body.presences) this.model.applyPresence(body.presences);
      this.onChange();
    } catch {
      // The event loop reports connection trouble.
    }
  }
}
