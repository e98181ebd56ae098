//! The accept loop: each connection is served as HTTP/1.1 (with upgrades, for WebSockets), with
//! TCP_NODELAY and a bounded send buffer, and must send its request in time.
//!
//! A connection that sends no request within [`REQUEST_WAIT`] is closed: each costs a file
//! descriptor and a task, and a local process could otherwise hold thousands. A connection
//! carries one request (no keep-alive; the hello's excepted); a WebSocket, once upgraded, may be idle as long as it
//! likes.

use axum::body::Body;
use axum::http::Request;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How long a connection may take to send its request.
pub const REQUEST_WAIT: Duration = Duration::from_secs(5);

/// The kernel's send buffer for each connection. A client that reads is told apart from one
/// that stopped by its writer taking frames (`outbox`), and the writer runs again when the
/// kernel wakes it: once a third of a full send buffer has drained. Left to autotuning, the
/// buffer grows to megabytes on loopback, and a client reading a flood slowly (a loaded
/// machine) drained that third in seconds and was taken for stopped. At 256 KiB (Linux
/// doubles it) the writer runs again after ~170 KiB read; a 64 MiB answer still leaves at
/// loopback speed.
const SEND_BUFFER_BYTES: usize = 256 << 10;

/// What the accept loop serves: the gated router, one clone per connection.
pub trait App:
    tower_service::Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
    + Clone
    + Send
    + 'static
{
}

impl<S> App for S where
    S: tower_service::Service<Request<Body>, Response = Response, Error = Infallible, Future: Send>
        + Clone
        + Send
        + 'static
{
}

/// One request per connection: every answer but a WebSocket's upgrade says `Connection: close`,
/// and hyper closes the connection after it. A client's HTTP agent keeps an answered connection
/// for its next request, and one reused just as the idle limit closed it got a reset
/// (Playwright's connectOverCDP: "socket hang up", a loaded e2e run). A new connection on
/// loopback costs less than that race. (hyper's `keep_alive(false)` would also close the
/// upgrade's `Connection: upgrade`, which clients refuse.) An answer that says `Connection`
/// itself keeps it: the hello's (`proof.rs`), whose client sends its request on the same
/// connection at once.
fn closing(mut response: Response) -> Response {
    let upgrade = response.status() == axum::http::StatusCode::SWITCHING_PROTOCOLS;
    if !upgrade && !response.headers().contains_key(axum::http::header::CONNECTION) {
        let close = axum::http::HeaderValue::from_static("close");
        response.headers_mut().insert(axum::http::header::CONNECTION, close);
    }
    response
}

/// Serves `app` on every connection `listener` accepts until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    app: impl App,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    tokio::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        tokio::spawn(serve_connection(tcp, app.clone()));
    }
}

async fn serve_connection(tcp: TcpStream, app: impl App) {
    // CDP is many small frames, answers and events interleaved: with Nagle's algorithm a small
    // write that follows another waits for the peer's delayed ACK (~40 ms on Linux).
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::warn!("cannot set TCP_NODELAY: {e}");
    }
    if let Err(e) = socket2::SockRef::from(&tcp).set_send_buffer_size(SEND_BUFFER_BYTES) {
        tracing::warn!("cannot set SO_SNDBUF: {e}");
    }
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let answered = app.clone().call(request.map(Body::new));
        async move { answered.await.map(closing) }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(REQUEST_WAIT)
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    if let Err(e) = connection.await {
        tracing::debug!("connection ended: {e}");
    }
}
