//! Minimal HTTP/1.1, on tokio's `net` feature alone (its `io-util` is not a dependency): the
//! messages the proxy reads, writes and sends to the engine.

use serde_json::Value;
use std::io;
use tokio::net::TcpStream;

/// Request and response heads larger than this are refused (DynamoDB's are a few hundred bytes).
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// A request or response: start line, headers, and the whole body.
#[derive(Debug, Clone)]
pub(crate) struct Message {
    pub(crate) start: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Message {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The status code of a response.
    pub(crate) fn status(&self) -> Option<u16> {
        self.start.split_whitespace().nth(1)?.parse().ok()
    }

    /// The message with its body length as `Content-Length` (never chunked), asking the
    /// other side to close the connection afterwards when `close`.
    pub(crate) fn to_bytes(&self, close: bool) -> Vec<u8> {
        let mut head = String::with_capacity(256);
        head.push_str(&self.start);
        head.push_str("\r\n");
        for (name, value) in &self.headers {
            let framing = ["content-length", "transfer-encoding", "connection"]
                .iter()
                .any(|framing| name.eq_ignore_ascii_case(framing));
            if !framing {
                head.push_str(name);
                head.push_str(": ");
                head.push_str(value);
                head.push_str("\r\n");
            }
        }
        head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// A socket with a read buffer.
pub(crate) struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

impl Connection {
    pub(crate) fn new(stream: TcpStream) -> Self {
        Connection {
            stream,
            buffer: Vec::new(),
        }
    }

    /// Reads more into the buffer; `false` at end of stream.
    pub(crate) async fn fill(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            self.stream.readable().await?;
            match self.stream.try_read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(read) => {
                    self.buffer
                        .extend_from_slice(chunk.get(..read).unwrap_or_default());
                    return Ok(true);
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Err(error),
            }
        }
    }

    pub(crate) async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            self.stream.writable().await?;
            match self.stream.try_write(bytes) {
                Ok(written) => bytes = bytes.get(written..).unwrap_or_default(),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// Takes exactly `count` bytes.
    async fn take(&mut self, count: usize) -> io::Result<Vec<u8>> {
        while self.buffer.len() < count {
            if !self.fill().await? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-message",
                ));
            }
        }
        Ok(self.buffer.drain(..count).collect())
    }

    /// Takes one CRLF-terminated line, without the CRLF.
    async fn line(&mut self) -> io::Result<String> {
        loop {
            if let Some(end) = find(&self.buffer, b"\r\n") {
                let line: Vec<u8> = self.buffer.drain(..end + 2).collect();
                return Ok(
                    String::from_utf8_lossy(line.get(..end).unwrap_or_default()).into_owned()
                );
            }
            if self.buffer.len() > MAX_HEAD_BYTES {
                return Err(invalid("line too long"));
            }
            if !self.fill().await? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-line",
                ));
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Reads one message; `None` when the connection closes cleanly before one starts. A message
/// without a length runs to the end of the stream when `to_eof` (a response on a connection
/// the other side closes), and is empty otherwise (a request without a body).
pub(crate) async fn read_message(
    connection: &mut Connection,
    to_eof: bool,
) -> io::Result<Option<Message>> {
    let end = loop {
        if let Some(end) = find(&connection.buffer, b"\r\n\r\n") {
            break end;
        }
        if connection.buffer.len() > MAX_HEAD_BYTES {
            return Err(invalid("head too long"));
        }
        if !connection.fill().await? {
            return if connection.buffer.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed mid-head",
                ))
            };
        }
    };
    let head: Vec<u8> = connection.buffer.drain(..end + 4).collect();
    let text = String::from_utf8_lossy(head.get(..end).unwrap_or_default()).into_owned();
    let mut lines = text.split("\r\n");
    let start = lines.next().unwrap_or_default().to_owned();
    let headers = lines
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            Some((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect();
    let mut message = Message {
        start,
        headers,
        body: Vec::new(),
    };
    let chunked = message
        .header("transfer-encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            let line = connection.line().await?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !connection.line().await?.is_empty() {}
                break;
            }
            let chunk = connection.take(size).await?;
            message.body.extend_from_slice(&chunk);
            connection.take(2).await?;
        }
    } else if let Some(length) = message.header("content-length") {
        let length: usize = length
            .trim()
            .parse()
            .map_err(|_| invalid("bad content-length"))?;
        message.body = connection.take(length).await?;
    } else if to_eof {
        while connection.fill().await? {}
        message.body = std::mem::take(&mut connection.buffer);
    }
    Ok(Some(message))
}

/// One request to the engine on a fresh connection, which the engine closes after answering.
pub(crate) async fn send_upstream(upstream: &str, request: &Message) -> io::Result<Message> {
    let stream = TcpStream::connect(upstream).await?;
    let mut connection = Connection::new(stream);
    connection.write_all(&request.to_bytes(true)).await?;
    read_message(&mut connection, true)
        .await?
        .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "the engine sent no response"))
}

/// Sends `operation` with JSON `body` to `upstream` (`host:port`), with the client's `headers`
/// but its own `X-Amz-Target` (moto reads the region from the signature's scope): the
/// requests the proxy makes of its own. The answer's JSON when it is a 200, else `None`.
pub(crate) async fn call(
    upstream: &str,
    headers: &[(String, String)],
    operation: &str,
    body: &Value,
) -> Option<Value> {
    let mut headers: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| !name.eq_ignore_ascii_case("x-amz-target"))
        .cloned()
        .collect();
    headers.push((
        "X-Amz-Target".to_owned(),
        format!("DynamoDB_20120810.{operation}"),
    ));
    let request = Message {
        start: "POST / HTTP/1.1".to_owned(),
        headers,
        body: body.to_string().into_bytes(),
    };
    let response = send_upstream(upstream, &request).await.ok()?;
    if response.status() != Some(200) {
        return None;
    }
    serde_json::from_slice(&response.body).ok()
}

pub(crate) fn json_response(status: u16, reason: &str, body: &Value) -> Message {
    Message {
        start: format!("HTTP/1.1 {status} {reason}"),
        headers: vec![
            (
                "Content-Type".to_owned(),
                "application/x-amz-json-1.0".to_owned(),
            ),
            (
                "x-amzn-RequestId".to_owned(),
                "singletable-fault".to_owned(),
            ),
        ],
        body: body.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn messages_are_reframed_with_a_content_length() -> TestResult {
        let message = Message {
            start: "HTTP/1.1 200 OK".into(),
            headers: vec![
                ("Transfer-Encoding".into(), "chunked".into()),
                ("X-Kept".into(), "yes".into()),
            ],
            body: b"{}".to_vec(),
        };
        let text = String::from_utf8(message.to_bytes(true))?;
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\nX-Kept: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        );
        Ok(())
    }
}
