#!/usr/bin/env python3
"""tests/cluster/attack.py - what cluster_test.py's `attack` test throws at
a running job's listening sockets, from whichever namespace and user it is
started in (ip netns exec, setpriv).  Standard library only.

  attack.py hit TARGET... [--kinds K,...] [--replay HEX] [--wait S]
      TARGET is ip:port:dialect, dialect `boot` (comm/boot_proto.h, the
      launcher's and agents' sockets) or `tcp` (comm/tcp_frame.h, a node's
      tcp listener).  Kinds: garbage (64 random bytes), hello (a HELLO for
      rank 1, without the key's handshake), extra (a HELLO of one node more
      than the job has), abort (an ABORT), silent (connects, says nothing),
      replay (the captured answer --replay, after reading our challenge).
      One connection per target and kind, all at once; each reads the
      challenge, sends its bytes and reads until the other side closes
      (at most --wait s).  Prints one JSON line per
      connection: target, kind, our local address, whether a challenge
      came (then the socket accepted us and must have said so once),
      whether it closed, and the bytes that came.
  attack.py sniff IFACE SECONDS
      Captures, on IFACE of this namespace (root: AF_PACKET), for at most
      SECONDS or until 4 are seen, the connector's answer in handshakes
      that start with an ompdsm challenge (comm/util/auth.h); prints one
      JSON line each: the acceptor's ip:port and the answer in hex."""
import json
import os
import socket
import struct
import sys
import threading
import time

TAG = b"OMPDSMA1"
CHALLENGE = 40
RESPONSE = 64
BOOT_MAGIC, BOOT_VERSION = 0x4F4D5042, 2
JOB_SIZE = int(os.environ.get("ATTACK_JOB_SIZE", "5"))


def boot_msg(kind):
    if kind in ("hello", "extra"):
        rank, size = (1, JOB_SIZE) if kind == "hello" else (JOB_SIZE,
                                                           JOB_SIZE + 1)
        body = struct.pack("IIiiiI", BOOT_MAGIC, BOOT_VERSION, rank, size,
                           4242, 0) + bytes(48 + 48 + 256 + 256)
        return struct.pack("II", 1, len(body)) + body
    text = b"forged abort"
    body = struct.pack("iIii", 42, 0, -1, -1) + text
    return struct.pack("II", 4, len(body)) + body


def tcp_frame(op, ident=0, off=0, a=0, length=0):
    return (bytes([0xD5, op, 0, 0]) + struct.pack("<I", length) +
            struct.pack("<QQQQ", ident, off, a, 0))


def tcp_msg(kind):
    if kind == "hello":
        return tcp_frame(1, 1, JOB_SIZE, 0x1234)
    if kind == "extra":
        return tcp_frame(1, JOB_SIZE, JOB_SIZE + 1, 0x1234)
    text = b"forged abort"
    return tcp_frame(11, length=len(text)) + text


def one(target, kind, replay, wait, out, lock):
    ip, port, dialect = target.split(":")
    rec = {"target": target, "kind": kind, "challenge": False,
           "closed": False, "got": 0}
    s = socket.socket()
    s.settimeout(wait)
    try:
        s.connect((ip, int(port)))
        rec["local"] = "%s:%d" % s.getsockname()
        # The challenge first: once the socket refuses what follows, a
        # reset may discard it unread, and whether it came tells whether
        # the socket accepted us (and must say so) or never did.
        got = b""
        while len(got) < CHALLENGE:
            x = s.recv(CHALLENGE - len(got))
            if not x:
                break
            got += x
        rec["got"] = len(got)
        rec["challenge"] = got.startswith(TAG)
        if kind == "replay":
            s.sendall(replay)
        elif kind == "garbage":
            s.sendall(os.urandom(64))
        elif kind != "silent":
            s.sendall(boot_msg(kind) if dialect == "boot" else tcp_msg(kind))
        t0 = time.monotonic()
        buf = b""
        while time.monotonic() - t0 < wait:
            x = s.recv(4096)
            if not x:
                rec["closed"] = True
                break
            buf += x
        rec["got"] += len(buf)
        rec["challenge"] = rec["challenge"] or buf.startswith(TAG)
    except ConnectionResetError:
        rec["closed"] = True
    except OSError as e:
        rec["error"] = str(e)
    finally:
        s.close()
    with lock:
        out.append(rec)


def hit(args):
    kinds, replay, wait, targets = ["garbage", "hello", "extra", "abort",
                                    "silent"], b"", 20.0, []
    i = 0
    while i < len(args):
        if args[i] == "--kinds":
            kinds = args[i + 1].split(",")
            i += 2
        elif args[i] == "--replay":
            replay = bytes.fromhex(args[i + 1])
            i += 2
        elif args[i] == "--wait":
            wait = float(args[i + 1])
            i += 2
        else:
            targets.append(args[i])
            i += 1
    out, lock, threads = [], threading.Lock(), []
    for t in targets:
        for k in kinds:
            th = threading.Thread(target=one, args=(t, k, replay, wait, out,
                                                    lock))
            th.start()
            threads.append(th)
    for th in threads:
        th.join()
    for rec in out:
        print(json.dumps(rec))


def sniff(iface, seconds):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((iface, 0))
    s.settimeout(0.2)
    flows, found = {}, []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds and len(found) < 4:
        try:
            pkt, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING or len(pkt) < 14 + 20:
            continue
        ip = pkt[14:]
        if ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        tcp = ip[ihl:total]
        off = (tcp[12] >> 4) * 4
        payload = tcp[off:]
        src = "%s:%d" % (socket.inet_ntoa(ip[12:16]),
                         struct.unpack("!H", tcp[0:2])[0])
        dst = "%s:%d" % (socket.inet_ntoa(ip[16:20]),
                         struct.unpack("!H", tcp[2:4])[0])
        if not payload:
            continue
        if payload[:8] == TAG and len(payload) == CHALLENGE:
            flows[(dst, src)] = "challenged"   # (connector, acceptor)
        elif flows.get((src, dst)) == "challenged" and len(payload) >= RESPONSE:
            flows[(src, dst)] = "answered"
            found.append({"acceptor": dst, "answer": payload[:RESPONSE].hex()})
    for f in found:
        print(json.dumps(f))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "hit":
        hit(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "sniff":
        sniff(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
