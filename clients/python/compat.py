"""Drives the reference's official Python binding (zulip 0.9.1, unmodified)
through what the reference's terminal client (zulip-terminal) does at
start-up and in use, against the server named by CHAT_SITE:

  - the binding's own start: GET /server_settings, where it asserts
    zulip_version;
  - zulip-terminal's POST /register (its event_types and fetch_event_types,
    client_gravatar, apply_markdown, include_subscribers) and the state keys
    it reads, then its long-poll loop on GET /events in a thread;
  - its first GET /messages (first unread anchor), narrows by channel,
    topic, direct messages, starred, mentions and search, and its "latest
    message in topic" query (integer channel operand, a huge anchor);
  - the topic list (GET /users/me/{stream_id}/topics), before and after new
    messages;
  - sending to a channel (type "stream", subject) and to people (type
    "private", user IDs), raw content, edit history, an edit;
  - flags (starred, read), reactions (add and remove, unicode and the
    extra emoji under the reference's type name) and the reaction event's
    user object, typing notifications, presence, pinning a channel.

Each step checks what zulip-terminal reads. Any failure raises; the exit
status says whether everything worked. Credentials come from the
environment: CHAT_SITE, CHAT_EMAIL and CHAT_API_KEY (the terminal's user),
CHAT_OTHER_EMAIL and CHAT_OTHER_API_KEY (someone to talk with).
"""

import json
import os
import queue
import sys
import threading
import time

import zulip

# zulip-terminal's lists (zulipterminal/model.py, Model.__init__).
INITIAL_DATA_TO_FETCH = [
    "realm",
    "presence",
    "subscription",
    "message",
    "starred_messages",
    "update_message_flags",
    "muted_topics",
    "realm_user",
    "realm_user_groups",
    "user_settings",
    "realm_emoji",
    "custom_profile_fields",
    "zulip_version",
]
EVENT_TYPES = [
    "message",
    "update_message",
    "reaction",
    "submessage",
    "subscription",
    "typing",
    "update_message_flags",
    "user_settings",
    "realm_emoji",
    "realm_user",
]
# The anchor zulip-terminal uses for "the newest".
NEWEST = 10000000000000000
CHANNEL = "terminal"


def step(name):
    print("--", name, flush=True)


def check(cond, what, got=None):
    if not cond:
        raise AssertionError(what + ("" if got is None else ": " + json.dumps(got, default=str)[:2000]))


def ok(response, what):
    check(response.get("result") == "success", what + " failed", response)
    return response


class Poller(threading.Thread):
    """zulip-terminal's poll_for_events: long polls until the queue goes."""

    def __init__(self, client, queue_id, last_event_id):
        super().__init__(daemon=True)
        self.client, self.queue_id, self.last_event_id = client, queue_id, last_event_id
        self.events = queue.Queue()
        self.error = None

    def run(self):
        while True:
            response = self.client.get_events(queue_id=self.queue_id, last_event_id=self.last_event_id)
            if "error" in response["result"]:
                # zulip-terminal re-registers after BAD_EVENT_QUEUE_ID; here
                # the queue was deleted on purpose, which ends the loop.
                self.error = response
                return
            for event in response["events"]:
                self.last_event_id = max(self.last_event_id, int(event["id"]))
                self.events.put(event)

    def wait_for(self, what, match, timeout=10):
        """Returns the first event for which match is true, dropping others."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                event = self.events.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                break
            if match(event):
                return event
        raise AssertionError("no %s event within %ss" % (what, timeout))


def main():
    site = os.environ["CHAT_SITE"]
    step("client start-up: GET /server_settings")
    me_client = zulip.Client(email=os.environ["CHAT_EMAIL"], api_key=os.environ["CHAT_API_KEY"], site=site,
                             client="ZulipTerminal/0.7.0 compat")
    other = zulip.Client(email=os.environ["CHAT_OTHER_EMAIL"], api_key=os.environ["CHAT_OTHER_API_KEY"], site=site)
    check(me_client.zulip_version, "zulip_version")
    check(me_client.feature_level >= 339, "zulip_feature_level", me_client.feature_level)

    step("setup: a channel with both users")
    other_profile = ok(other.get_profile(), "GET /users/me (other)")
    me_profile = ok(me_client.get_profile(), "GET /users/me")
    check(me_profile["max_message_id"] == -1, "nothing received yet", me_profile)
    ok(me_client.add_subscriptions([{"name": CHANNEL}], principals=[me_profile["user_id"], other_profile["user_id"]]),
       "subscribe")
    stream_id = ok(me_client.get_stream_id(CHANNEL), "get_stream_id")["stream_id"]
    first = ok(other.send_message({"type": "stream", "to": CHANNEL, "subject": "welcome", "content": "hello **terminal**"}),
               "send to a channel")["id"]

    step("register like zulip-terminal")
    state = ok(me_client.register(event_types=EVENT_TYPES, fetch_event_types=INITIAL_DATA_TO_FETCH,
                                  client_gravatar=True, apply_markdown=True, include_subscribers=True), "register")
    for key in ["zulip_version", "zulip_feature_level", "max_message_id", "queue_id", "last_event_id", "subscriptions",
                "muted_topics", "realm_user_groups", "realm_emoji", "user_settings", "realm_message_retention_days",
                "presences", "realm_users", "cross_realm_bots", "custom_profile_fields", "user_id", "email",
                "full_name", "realm_name", "unread_msgs", "starred_messages", "max_topic_length",
                "max_message_length", "max_stream_name_length", "server_presence_ping_interval_seconds"]:
        check(key in state, "register has " + key, sorted(state))
    check(state["max_message_id"] == first, "max_message_id is the newest message received", state["max_message_id"])
    check(set(map(len, state["muted_topics"])) in (set(), {3}), "muted_topics triples", state["muted_topics"])
    for setting in ["send_private_typing_notifications", "twenty_four_hour_time", "pm_content_in_desktop_notifications"]:
        check(setting in state["user_settings"], "user_settings has " + setting)
    subscription = [s for s in state["subscriptions"] if s["stream_id"] == stream_id]
    check(len(subscription) == 1 and other_profile["user_id"] in subscription[0]["subscribers"],
          "the channel's subscription with its subscribers", state["subscriptions"])
    users = {u["user_id"]: u for u in state["realm_users"]}
    check(other_profile["user_id"] in users and state["user_id"] in users, "realm_users", sorted(users))
    me_id, other_id = state["user_id"], other_profile["user_id"]
    poller = Poller(me_client, state["queue_id"], state["last_event_id"])
    poller.start()

    step("first message fetch: the first unread anchor")
    messages = ok(me_client.get_messages({"anchor": 0, "num_before": 30, "num_after": 10, "apply_markdown": True,
                                          "use_first_unread_anchor": True, "client_gravatar": True,
                                          "narrow": json.dumps([])}), "GET /messages")
    check(messages["anchor"] == first and "found_newest" in messages, "anchor at the first unread", messages)
    check([m["id"] for m in messages["messages"]] == [first], "the message", messages["messages"])
    message = messages["messages"][0]
    check(message["content"] == "<p>hello <strong>terminal</strong></p>" and message["subject"] == "welcome",
          "rendered content and subject", message)
    for key in ["display_recipient", "reactions", "flags", "sender_full_name", "sender_email", "timestamp", "stream_id",
                "type", "recipient_id", "topic_links"]:
        check(key in message, "message has " + key, message)

    step("the channel's email address, as the stream info of zulip-terminal asks for it")
    address = ok(me_client.get_stream_email_address(stream_id), "GET /streams/{stream_id}/email_address")
    check(isinstance(address.get("email"), str), "an email address (empty without a gateway)", address)
    bots = {b["full_name"]: b for b in state["cross_realm_bots"]}
    check("Notification Bot" in bots and bots["Notification Bot"]["is_system_bot"], "the internal bots", state["cross_realm_bots"])
    check(not set(u["user_id"] for u in state["cross_realm_bots"]) & set(users), "internal bots are not users", sorted(users))

    step("the topic list")
    topics = ok(me_client.get_stream_topics(stream_id), "GET /users/me/{stream_id}/topics")["topics"]
    check(topics == [{"name": "welcome", "max_id": first}], "one topic", topics)

    step("sending to a channel, and its event")
    sent = ok(me_client.send_message({"type": "stream", "to": CHANNEL, "subject": "plans", "content": "lunch?",
                                      "read_by_sender": True}), "send to a channel")["id"]
    event = poller.wait_for("message", lambda e: e["type"] == "message" and e["message"]["id"] == sent)
    check(event["message"]["content"] == "<p>lunch?</p>" and "read" in event["flags"], "the message event", event)
    topics = ok(me_client.get_stream_topics(stream_id), "topics after a new one")["topics"]
    check([t["name"] for t in topics] == ["plans", "welcome"] and topics[0]["max_id"] == sent,
          "the newest topic first", topics)

    step("sending to people, and its event")
    dm = ok(me_client.send_message({"type": "private", "to": [other_id], "content": "psst", "read_by_sender": True}),
            "send to people")["id"]
    event = poller.wait_for("direct message", lambda e: e["type"] == "message" and e["message"]["id"] == dm)
    recipients = sorted(r["id"] for r in event["message"]["display_recipient"])
    check(event["message"]["type"] == "private" and recipients == sorted([me_id, other_id]), "a direct message", event)

    step("narrows")
    def fetch(narrow, anchor=NEWEST, before=30):
        response = ok(me_client.get_messages({"anchor": anchor, "num_before": before, "num_after": 0,
                                              "apply_markdown": True, "client_gravatar": True,
                                              "narrow": json.dumps(narrow)}), "GET /messages %s" % narrow)
        return [m["id"] for m in response["messages"]], response
    check(fetch([["stream", CHANNEL]])[0] == [first, sent], "channel narrow")
    check(fetch([["stream", CHANNEL], ["topic", "plans"]])[0] == [sent], "topic narrow")
    check(fetch([["pm-with", users[other_id]["email"]]])[0] == [dm], "direct message narrow")
    check(fetch([["is", "private"]])[0] == [dm], "all direct messages")
    latest, _ = fetch([{"operator": "stream", "operand": stream_id}, {"operator": "topic", "operand": "welcome"}], before=1)
    check(latest == [first], "the latest message in a topic (integer channel operand)", latest)
    mention = ok(other.send_message({"type": "stream", "to": CHANNEL, "subject": "plans",
                                     "content": "@**%s** noon works" % state["full_name"]}), "a mention")["id"]
    poller.wait_for("mention", lambda e: e["type"] == "message" and e["message"]["id"] == mention)
    check(fetch([["is", "mentioned"]])[0] == [mention], "mentions")
    ids, response = fetch([["search", "noon"]])
    check(ids == [mention] and "highlight" in response["messages"][0]["match_content"], "search", response["messages"])

    step("flags")
    ok(me_client.update_message_flags({"messages": [first], "flag": "starred", "op": "add"}), "star")
    event = poller.wait_for("starred", lambda e: e["type"] == "update_message_flags" and e["flag"] == "starred")
    check(event["op"] == "add" and event["messages"] == [first], "the star event", event)
    check(fetch([["is", "starred"]])[0] == [first], "starred narrow")
    ok(me_client.update_message_flags({"messages": [first, mention], "flag": "read", "op": "add"}), "mark read")
    poller.wait_for("read", lambda e: e["type"] == "update_message_flags" and e["flag"] == "read")

    step("reactions and the reaction event")
    spec = {"message_id": str(first), "emoji_name": "thumbs_up", "emoji_code": "1f44d", "reaction_type": "unicode_emoji"}
    ok(me_client.add_reaction(spec), "add a reaction")
    event = poller.wait_for("reaction", lambda e: e["type"] == "reaction")
    check(event["op"] == "add" and event["message_id"] == first and event["user_id"] == me_id, "reaction event", event)
    check(event["user"]["user_id"] == me_id and event["user"]["full_name"] == state["full_name"]
          and event["user"]["email"] == state["email"], "the reaction event's user object", event)
    extra = {"message_id": first, "emoji_name": "zulip", "emoji_code": "zulip", "reaction_type": "zulip_extra_emoji"}
    ok(other.add_reaction(extra), "the extra emoji under the reference's type")
    event = poller.wait_for("reaction", lambda e: e["type"] == "reaction")
    check(event["user"]["user_id"] == other_id and event["emoji_code"] == "zulip", "someone else's reaction", event)
    message = ok(me_client.get_raw_message(first), "GET /messages/{id}")["message"]
    check(sorted((r["emoji_code"], r["user_id"]) for r in message["reactions"]) == [("1f44d", me_id), ("zulip", other_id)],
          "the message's reactions", message["reactions"])
    ok(me_client.remove_reaction(spec), "remove a reaction")
    event = poller.wait_for("reaction", lambda e: e["type"] == "reaction")
    check(event["op"] == "remove" and event["user"]["user_id"] == me_id, "the removal event", event)

    step("typing")
    ok(other.set_typing_status({"to": [me_id], "op": "start"}), "typing start")
    event = poller.wait_for("typing", lambda e: e["type"] == "typing")
    check(event["op"] == "start" and event["sender"]["user_id"] == other_id, "typing event", event)
    ok(me_client.set_typing_status({"to": [other_id], "op": "stop"}), "typing stop")

    step("raw content, edit history, an edit")
    check(ok(me_client.get_raw_message(sent), "raw")["raw_content"] == "lunch?", "raw content")
    ok(me_client.update_message({"message_id": sent, "content": "lunch at one?"}), "edit")
    event = poller.wait_for("update_message", lambda e: e["type"] == "update_message")
    check(event["message_id"] == sent and "lunch at one" in event["rendered_content"], "the edit event", event)
    history = ok(me_client.get_message_history(sent), "history")["message_history"]
    check(len(history) == 2 and history[-1]["content"] == "lunch at one?", "two versions", history)

    step("presence and channel settings")
    presence = ok(me_client.update_presence({"status": "active", "new_user_input": True}), "presence")
    check("presences" in presence, "presences in the answer", presence)
    ok(me_client.update_subscription_settings([{"stream_id": stream_id, "property": "pin_to_top", "value": True}]), "pin")
    event = poller.wait_for("subscription", lambda e: e["type"] == "subscription" and e["op"] == "update")
    check(event["property"] == "pin_to_top" and event["value"] is True, "the subscription event", event)

    step("deregister ends the long poll")
    ok(me_client.deregister(state["queue_id"]), "DELETE /events")
    poller.join(10)
    check(not poller.is_alive() and poller.error["code"] == "BAD_EVENT_QUEUE_ID", "the poll ends", poller.error)
    print("ok", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # one line for the Go test's log, then the trace
        print("FAILED:", e, flush=True)
        raise
