// Package slack converts a Slack workspace export (the standard export
// zip) into teamchat's export format, as a new organization
// (archive.Manifest.NewOrganization): the records are the storage
// package's, the same an export of teamchat holds, and
// chat.Service.ImportRealm loads them.
//
// The mapping follows the reference's Slack importer (its
// zerver/data_import/slack.py and slack_message_conversion.py): users
// with their emails, names, time zones, roles (owners, admins, guests for
// restricted users), deactivation and bots; public channels
// (channels.json) and private ones (groups.json) with their members,
// purpose as description, and archived state; direct messages (dms.json)
// and group direct messages (mpims.json); messages with Slack's markup
// converted to Markdown (user mentions, @channel/@here/@everyone as
// @**all**, channel links, links, bold, italic, strike; code, code blocks
// and quotes are the same in both), reactions with Slack's emoji names,
// and the message subtypes as the reference treats them: joins, leaves,
// renames and pins are left out, "/me" actions stay actions, bot messages
// come from a bot user, file shares carry their files. Where it differs,
// and why:
//
//   - Threads always become topics (the reference does so only when asked):
//     a thread's topic is the date and the start of its first message, with
//     a counter when two threads would share one; unthreaded messages go
//     to the reference's default topic, "imported from Slack".
//   - Files are imported when the zip holds them, at
//     __uploads/<file ID>/<file name> (the layout of export tools that
//     download them); otherwise the message links to Slack's URL. The
//     reference downloads them with an API token, which an offline
//     import does not have.
//   - Custom emoji and bot profiles cannot be fetched without Slack's API:
//     reactions with a custom emoji are left out (and counted in the
//     report's warnings); a bot that posted without a user record gets a
//     bot account named after the message's username.
//   - Slack's emoji names (iamcal's) become code points through a table
//     of the frequent names that differ from this server's (Slack's :smile:
//     is this server's :big_smile:), then this server's names; the
//     reference maps every name through iamcal's data, which is not at
//     hand offline. A name neither knows is left out with a warning.
//   - Custom profile fields are not imported.
//   - Every imported message is read for everyone (an imported history
//     is not news).
//   - An edited message keeps its last text, marked edited at its time
//     (Slack's export has no earlier versions).
//
// A zip is read with the same care as teamchat's own archives: entries
// whose names leave the folder or are links are refused, and so is an
// entry whose stated size is larger than any real file of an export, or
// that holds more bytes than it states.
package slack
