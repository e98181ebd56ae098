//! `/mcp` sessions belong to the credential that opened them. rmcp knows a session by its
//! `Mcp-Session-Id` alone, so whoever held the id could use or end it; [`Owned`] records who
//! opened each session (the token presented and the agent the request acts for) and answers a
//! request carrying a session id with rmcp's own `404 Session not found` unless it comes from
//! that same owner: on every method (`POST`, the `GET` event stream, `DELETE`), whatever the
//! token's form (path, `?token=`, `Authorization`) and whatever agent path it names. A revoked
//! agent token's sessions are ended with it ([`Owned::end_sessions_of`]).

use crate::agent_path::AgentRoute;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionManager, StreamableHttpService};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// Who opened a session: a digest of the token it presented (`""` without one) and the agent
/// its request acted for, so the table holds no token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner([u8; 32]);

impl Owner {
    pub fn of(route: &AgentRoute) -> Owner {
        let mut digest = Sha256::new();
        digest.update(route.token_prefix.as_bytes());
        digest.update([0]);
        digest.update(route.agent.as_str().as_bytes());
        Owner(digest.finalize().into())
    }
}

/// Who opened a session, and the agent whose own token that was, if it was one.
#[derive(Clone, Debug)]
struct Opener {
    owner: Owner,
    agent_token: Option<String>,
}

/// Session id to opener, for the sessions opened through this daemon.
#[derive(Clone, Default, Debug)]
pub struct Owners(Arc<Mutex<HashMap<String, Opener>>>);

impl Owners {
    /// Records a session rmcp just opened; an id already recorded keeps its owner.
    fn opened(&self, id: &str, route: &AgentRoute) {
        let agent_token = match &route.credential {
            crate::credential::Credential::Agent(name) => Some(name.clone()),
            _ => None,
        };
        self.lock().entry(id.to_owned()).or_insert(Opener { owner: Owner::of(route), agent_token });
    }

    /// Whether `id` is a session `owner` opened (an unknown id is nobody's).
    fn belongs_to(&self, id: &str, owner: Owner) -> bool {
        self.lock().get(id).is_some_and(|opener| opener.owner == owner)
    }

    /// The sessions opened with these agents' own tokens.
    fn of_agents(&self, agents: &[String]) -> Vec<String> {
        let openers = self.lock();
        let named = |o: &Opener| o.agent_token.as_ref().is_some_and(|a| agents.contains(a));
        openers.iter().filter(|(_, o)| named(o)).map(|(id, _)| id.clone()).collect()
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Opener>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

type Inner = StreamableHttpService<super::proxy::Proxy, LocalSessionManager>;

/// rmcp's streamable HTTP service with its sessions held to their owners.
#[derive(Clone)]
pub struct Owned {
    inner: Inner,
    sessions: Arc<LocalSessionManager>,
    owners: Owners,
}

/// What rmcp answers for a session it does not know (the MCP spec's 404).
fn unknown_session() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

impl Owned {
    pub fn new(inner: Inner, sessions: Arc<LocalSessionManager>) -> Self {
        Owned { inner, sessions, owners: Owners::default() }
    }

    async fn handle(self, request: Request<Body>) -> Response {
        // The gate puts the route in every request; without one nobody is known to own anything.
        let Some(route) = request.extensions().get::<AgentRoute>().cloned() else {
            return (StatusCode::FORBIDDEN, "tabtunnel: /mcp outside the gate").into_response();
        };
        let owner = Owner::of(&route);
        let mut presented = request.headers().get_all(HEADER_SESSION_ID).iter();
        let session = match (presented.next(), presented.next()) {
            (None, _) => None,
            (Some(id), None) => match id.to_str() {
                Ok(id) if self.owners.belongs_to(id, owner) => Some(id.to_owned()),
                _ => return unknown_session(),
            },
            (Some(_), Some(_)) => {
                return (StatusCode::BAD_REQUEST, "Bad Request: more than one Mcp-Session-Id").into_response()
            }
        };
        let deleting = request.method() == Method::DELETE;
        let response = self.inner.handle(request).await.into_response();
        match (session, response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok())) {
            (Some(id), _) if deleting && response.status().is_success() => self.owners.forget(&id),
            (None, Some(opened)) => {
                self.forget_ended().await;
                self.owners.opened(opened, &route);
            }
            _ => {}
        }
        response
    }

    /// Ends the sessions opened with these (revoked) agents' own tokens, and their tool servers:
    /// nobody can use them any more, and each holds a Node process and one of the agent's slots.
    pub async fn end_sessions_of(&self, agents: &[String]) {
        for id in self.owners.of_agents(agents) {
            if let Err(e) = self.sessions.close_session(&id.as_str().into()).await {
                tracing::warn!("could not end a revoked agent's MCP session: {e}");
            }
            self.owners.forget(&id);
        }
    }

    /// Drops the sessions rmcp has ended (idle), so the table stays as small as they are.
    async fn forget_ended(&self) {
        for id in self.owners.ids() {
            if !self.sessions.has_session(&id.as_str().into()).await.unwrap_or(true) {
                self.owners.forget(&id);
            }
        }
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl tower_service::Service<Request<Body>> for Owned {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> BoxFuture {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credential::Credential;
    use tabtunnel_core::AgentId;

    fn route(token: &str, agent: &str) -> AgentRoute {
        AgentRoute {
            agent: AgentId::new(agent),
            prefix: String::new(),
            token_prefix: format!("/{token}"),
            credential: Credential::Agent(agent.into()),
            identity: Default::default(),
        }
    }

    #[test]
    fn an_owner_is_the_token_and_the_agent_together() {
        let alice = Owner::of(&route("tta_a", "alice"));
        assert_eq!(alice, Owner::of(&route("tta_a", "alice")));
        assert_ne!(alice, Owner::of(&route("tta_b", "alice")), "another token");
        assert_ne!(alice, Owner::of(&route("tta_a", "bob")), "another agent");
        // The boundary between the two parts is not movable.
        assert_ne!(Owner::of(&route("x", "ab")), Owner::of(&route("xa", "b")));
    }

    #[test]
    fn a_session_is_its_openers_only_and_an_unknown_one_nobodys() {
        let owners = Owners::default();
        let (alices, bobs) = (route("a", "alice"), route("b", "bob"));
        let (alice, bob) = (Owner::of(&alices), Owner::of(&bobs));
        owners.opened("s1", &alices);
        owners.opened("s1", &bobs);
        assert!(owners.belongs_to("s1", alice));
        assert!(!owners.belongs_to("s1", bob));
        assert!(!owners.belongs_to("s2", alice));
        owners.opened("s2", &bobs);
        owners.opened("s3", &AgentRoute { credential: Credential::Owner, ..route("o", "alice") });
        assert_eq!(owners.of_agents(&["alice".into()]), ["s1"], "the owner token's session is not hers");
        owners.forget("s1");
        assert!(!owners.belongs_to("s1", alice));
    }
}
