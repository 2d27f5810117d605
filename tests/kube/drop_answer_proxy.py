#!/usr/bin/env python3
"""A TCP relay for t_write_once_real.sh: relays TLS bytes between the client and kube-apiserver
untouched, except that once the ARM file exists, the next bytes a client sends on a connection
older than half a second (a kept-alive one: a request after its first) are relayed, the server's
answer to them is swallowed, and that connection is closed 1 s later without a byte of answer
(kube-apiserver stored the write and died before answering, as the client sees it). New
connections are relayed as usual, so a client that sends the request again succeeds.
  drop_answer_proxy.py LISTEN_PORT UPSTREAM_PORT ARM_FILE"""
import os, socket, sys, threading, time

listen_port, upstream_port, arm = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


def handle(cli):
    up = socket.create_connection(("127.0.0.1", upstream_port))
    born = time.monotonic()
    state = {"drop": False}

    def c2s():
        try:
            while True:
                d = cli.recv(65536)
                if not d:
                    break
                with lock:
                    if not state["drop"] and time.monotonic() - born > 0.5 and os.path.exists(arm):
                        os.unlink(arm)
                        state["drop"] = True
                        print("dropping the answer on a kept-alive connection", flush=True)
                        threading.Timer(1.0, lambda: (cli.shutdown(socket.SHUT_RDWR), up.close())).start()
                up.sendall(d)
        except OSError:
            pass

    def s2c():
        try:
            while True:
                d = up.recv(65536)
                if not d:
                    break
                if not state["drop"]:
                    cli.sendall(d)
        except OSError:
            pass
        try:
            cli.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    threading.Thread(target=c2s, daemon=True).start()
    threading.Thread(target=s2c, daemon=True).start()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", listen_port))
srv.listen(64)
while True:
    c, _ = srv.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
