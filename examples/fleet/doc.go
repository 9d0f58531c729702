// Package fleet is a tested deployment of several servers: three
// examples/server processes on one PostgreSQL database behind Debian's
// nginx doing plain round-robin (nginx.conf, the configuration the README's
// "Several servers" section shows).
//
// Its test (fleet_test.go) builds the server, starts the three and nginx,
// and runs through the balancer: long polls woken by sends made through
// other servers, the reference's Python binding and zulip-js suites, a
// rolling restart of all three under an 8-client send load, and a kill -9
// of one of them under that load. It needs nginx (Debian's nginx-light or
// nginx) and TEAMCHAT_POSTGRES_DSN; without them it is skipped, unless
// TEAMCHAT_REQUIRE_FLEET=1 (CI), which makes it fail instead.
//
// Its benchmarks measure a send reaching a waiting long poll through the
// balancer when the queue is on another server than the send, beside the
// same on one server without a balancer, and a poll forwarded from one
// server to another beside the same poll answered by its holder:
//
//	TEAMCHAT_POSTGRES_DSN=... go test -run XXX -bench . -benchtime 2000x ./examples/fleet
package fleet
