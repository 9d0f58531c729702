package rest

import chat "github.com/teamchat/chat"

// routes lists every endpoint, one line each, below /api/v1.
func routes() []endpoint {
	type S = chat.Service
	return []endpoint{
		publicNoArgs("GET", "/server_settings", (*S).GetServerSettings),
		public("POST", "/fetch_api_key", (*S).FetchAPIKey),
		authedNoArgs("POST", "/users/me/api_key/regenerate", (*S).RegenerateAPIKey),
		authedNoArgs("GET", "/users/me", (*S).GetOwnUser),
		authed("GET", "/users", (*S).GetUsers),
		authed("POST", "/users", (*S).CreateUser),
		authed("GET", "/users/{user_id:int}", (*S).GetUser),
		authed("GET", "/users/{email}", (*S).GetUserByEmail),
	}
}
