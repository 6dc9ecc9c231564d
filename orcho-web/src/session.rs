//! Who is asking: a bearer token, or a session cookie a login link made,
//! with the CSRF token of its forms.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{FromRequestParts, Query, State},
    http::{HeaderMap, StatusCode, header, request::Parts},
    response::{IntoResponse, Redirect, Response},
};
use serde::Deserialize;

use super::{
    Web,
    tokens::{Access, constant_eq, random_hex},
};

/// The session cookie's name.
const COOKIE: &str = "orcho_session";

/// A logged-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The token's name; what it may do is read from the token file at
    /// each request, so that removing the token ends the session.
    pub(crate) name: String,
    pub(crate) csrf: String,
}

/// The sessions of this server, in memory: a restart logs everyone out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sessions(Arc<Mutex<HashMap<String, Session>>>);

impl Sessions {
    fn open(&self, name: String) -> Option<String> {
        let (id, csrf) = (random_hex()?, random_hex()?);
        self.0
            .lock()
            .ok()?
            .insert(id.clone(), Session { name, csrf });
        Some(id)
    }

    fn get(&self, id: &str) -> Option<Session> {
        self.0.lock().ok()?.get(id).cloned()
    }

    fn close(&self, id: &str) {
        if let Ok(mut sessions) = self.0.lock() {
            sessions.remove(id);
        }
    }
}

/// Who asks, and how they proved it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) name: String,
    pub(crate) access: Access,
    /// The session's CSRF token, for a caller with a cookie; `None` for a
    /// bearer token (no cookie, nothing a page can forge).
    pub(crate) csrf: Option<String>,
}

impl Caller {
    /// Refuses a read-only caller.
    pub(crate) fn may_decide(&self) -> Result<(), Refused> {
        match self.access {
            Access::Decide => Ok(()),
            Access::ReadOnly => Err(Refused::Forbidden(format!(
                "the token `{}` may look but not decide",
                self.name
            ))),
        }
    }

    /// Refuses a form whose CSRF token is not the session's.
    pub(crate) fn check_csrf(&self, given: Option<&str>) -> Result<(), Refused> {
        match &self.csrf {
            None => Ok(()),
            Some(csrf) if given.is_some_and(|g| constant_eq(g, csrf)) => Ok(()),
            Some(_) => Err(Refused::Forbidden(
                "the form's CSRF token is missing or stale: reload the page".to_owned(),
            )),
        }
    }
}

/// Why a request is refused before it is handled.
#[derive(Debug)]
pub(crate) enum Refused {
    /// No token, or one that is not known (or no longer): 401.
    Unauthorized,
    /// Known, and not allowed this: 403.
    Forbidden(String),
}

const LOG_IN: &str = "log in: `orcho serve token add NAME` prints a login link; the API takes \
                      `Authorization: Bearer TOKEN`";

impl Refused {
    /// The refusal as the API says it: `{"error", "hint", "exit_code"}`.
    pub(crate) fn json(self) -> Response {
        let (status, error, hint) = match self {
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "no valid token".to_owned(),
                LOG_IN.to_owned(),
            ),
            Self::Forbidden(why) => (
                StatusCode::FORBIDDEN,
                why,
                "ask for a token that may decide, or reload the page".to_owned(),
            ),
        };
        let body = serde_json::json!({"error": error, "hint": hint, "exit_code": 1});
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl IntoResponse for Refused {
    /// The refusal as a page says it.
    fn into_response(self) -> Response {
        let (status, title, text) = match self {
            Self::Unauthorized => (StatusCode::UNAUTHORIZED, "Log in", LOG_IN.to_owned()),
            Self::Forbidden(why) => (StatusCode::FORBIDDEN, "Not allowed", why),
        };
        let page = maud::html! {
            (maud::DOCTYPE)
            html lang="en" {
                head { meta charset="utf-8"; meta name="viewport" content="width=device-width, initial-scale=1"; title { (title) " · orcho" } }
                body { main { h1 { (title) } p role="alert" { (text) } } }
            }
        };
        (status, page).into_response()
    }
}

fn cookie_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then(|| value.to_owned())
        })
}

impl FromRequestParts<Web> for Caller {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Self, Self::Rejection> {
        if let Some(bearer) = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        {
            let token = web
                .tokens
                .check(bearer)
                .ok()
                .flatten()
                .ok_or(Refused::Unauthorized)?;
            return Ok(Self {
                name: token.name,
                access: token.access,
                csrf: None,
            });
        }
        let id = cookie_of(&parts.headers).ok_or(Refused::Unauthorized)?;
        let session = web.sessions.get(&id).ok_or(Refused::Unauthorized)?;
        // A token removed (or changed) since the login ends its sessions.
        let token = web
            .tokens
            .list()
            .ok()
            .and_then(|tokens| tokens.into_iter().find(|t| t.name == session.name));
        let Some(token) = token else {
            web.sessions.close(&id);
            return Err(Refused::Unauthorized);
        };
        Ok(Self {
            name: session.name,
            access: token.access,
            csrf: Some(session.csrf),
        })
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Login {
    token: Option<String>,
}

/// `GET /login?token=…`: the token, exchanged for a session cookie; the
/// browser goes on to the inbox (and the token leaves its address bar).
pub(crate) async fn login(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(login): Query<Login>,
) -> Response {
    let Some(token) = login
        .token
        .as_deref()
        .and_then(|t| web.tokens.check(t).ok().flatten())
    else {
        return Refused::Unauthorized.into_response();
    };
    let Some(id) = web.sessions.open(token.name) else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a session\n",
        )
            .into_response();
    };
    // Behind a proxy that speaks TLS, the cookie is sent over TLS only.
    let secure = headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes() == b"https");
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/{}",
        if secure { "; Secure" } else { "" }
    );
    // A page, not a redirect: a login link opened from another site would
    // not send the new SameSite=Strict cookie along a redirect; a step from
    // this page to the inbox does.
    let page = maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content="0; url=/";
                title { "Logged in · orcho" }
            }
            body { main { p { "Logged in. " a href="/" { "Go to the inbox" } } } }
        }
    };
    ([(header::SET_COOKIE, cookie)], page).into_response()
}

#[derive(Debug, Deserialize)]
pub(crate) struct LogoutForm {
    csrf: Option<String>,
}

/// `POST /logout`: ends the session.
pub(crate) async fn logout(
    State(web): State<Web>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<LogoutForm>,
) -> Response {
    if let Some(id) = cookie_of(&headers) {
        let Some(session) = web.sessions.get(&id) else {
            return Refused::Unauthorized.into_response();
        };
        if !form
            .csrf
            .as_deref()
            .is_some_and(|c| constant_eq(c, &session.csrf))
        {
            return Refused::Forbidden(
                "the form's CSRF token is missing or stale: reload the page".to_owned(),
            )
            .into_response();
        }
        web.sessions.close(&id);
    }
    let cookie = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response()
}
