"""Serve moto's DynamoDB backend for singletable's local engine.

Written into the virtual environment and started by singletable_runtime::local.
Differences from `moto_server`, and why:
  * one lock around every request: moto's backends are not thread-safe, and
    the stock threaded server loses acknowledged writes and answers HTTP 500
    under concurrent transactions;
  * port 0, announced on stdout as SINGLETABLE_MOTO_PORT=<port>: the OS picks
    a free port, so parallel test processes never collide;
  * exits when stdin reaches EOF: the Rust process holds the write end for its
    whole life, so the server stops with it, even if it is killed;
  * no per-request logging: its chatter would drown the test output.
"""

import io
import logging
import os
import sys
import threading


def exit_on_stdin_eof():
    # read() returns only at EOF: when the parent exits, however it exits.
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except Exception:
        pass
    os._exit(0)


def read_body(environ):
    # Reads the whole body up front, so the locked section never waits on a slow client.
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > 0:
        chunks = []
        remaining = length
        while remaining > 0:
            chunk = stream.read(remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    if environ.get("wsgi.input_terminated"):
        # Chunked request: werkzeug ends the stream at the last chunk.
        return stream.read()
    return b""


def serialized(app):
    lock = threading.Lock()

    def application(environ, start_response):
        body = read_body(environ)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        environ["wsgi.input_terminated"] = True
        with lock:
            result = app(environ, start_response)
            try:
                # Materialise the response while still holding the lock: a lazy
                # iterable could otherwise read backend state after release.
                return list(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()

    return application


def by_target(dynamodb, streams):
    """One endpoint for both APIs, as DynamoDB Local has: the Streams API's requests name
    their operation with the DynamoDBStreams_20120810 target prefix. Both apps share moto's
    backends, so the streams are those of the tables."""

    def application(environ, start_response):
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        app = streams if target.startswith("DynamoDBStreams_20120810.") else dynamodb
        return app(environ, start_response)

    return application


def main():
    threading.Thread(target=exit_on_stdin_eof, name="stdin-eof", daemon=True).start()

    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    from werkzeug.serving import WSGIRequestHandler, make_server
    from moto.moto_server.werkzeug_app import create_backend_app

    class QuietHandler(WSGIRequestHandler):
        def log_request(self, code="-", size="-"):
            pass

    app = serialized(by_target(create_backend_app("dynamodb"), create_backend_app("dynamodbstreams")))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)

    sys.stdout.write("SINGLETABLE_MOTO_PORT=%d\n" % server.server_port)
    sys.stdout.flush()
    # Nobody reads stdout after the port line: point it at stderr (the log
    # file) so a stray print can neither block on a full pipe nor fail on a
    # closed one.
    try:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    except OSError:
        pass

    server.serve_forever()


if __name__ == "__main__":
    main()
