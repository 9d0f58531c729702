// Package archive reads and writes teamchat's export format: one gzipped
// tar stream holding a manifest, then an organization's records as JSON
// Lines, kind by kind, then its uploaded files and custom emoji images.
// Both directions are streams: a writer buffers at most one chunk of
// records, a reader holds one line.
//
// Layout (every name relative, in this order):
//
//	manifest.json                 the Manifest
//	records/<kind>/<NNNNNN>.jsonl records of one kind (storage.Kinds order), one JSON object a line
//	uploads/<path>                an uploaded file: its path_id without the organization's ID
//	emoji/<file name>             a custom emoji image
//
// The reader refuses, with an error that names the entry (and the line),
// whatever a real archive never holds: names that leave the archive's
// folder or are not clean, links and other special entries, entries larger
// than the limits (a records chunk is at most MaxRecordsEntry, a line at
// most MaxLine), records of an unknown kind or out of order, broken JSON
// or unknown fields, and a manifest of another format or a newer version.
package archive
