#!/usr/bin/env python3
"""Reads everything `resumedata` writes with readers this project did not write.

For every resume blob in Fixtures/ and every operation that writes one (`repair --target` for each
target, `convert --to` for each generation and `--format`, and an `edit` of the URL and a header),
the output is read with Python's `plistlib` and `bpylist2` (NSKeyedArchiver objects), following
only ../shared/docs/resume-data-format.md, never this project's code:

- the envelope Apple writes: `$archiver` NSKeyedArchiver, `$version` 100000, `$objects[0]` `$null`,
  class objects with `$classname` and `$classes`;
- the `$top` key each of Apple's decoders looks up (format notes §1 and §6): the literal
  `NSKeyedArchiveRootObjectKey` for a keyed resume dictionary, Safari's dictionary, WebKit's
  wrapper and the request archives (`root` with the `$N` slot layout only for iOS 10.0-10.1); `root`
  for a Network.framework blob (once unmasked) and for the response archive. Each archive is
  decoded by a reader that looks up only that key, as Apple's does;
- the form the operation asked for (the generation `convert --to` names; a form the repair target
  reads), and request archives in the layout every system but iOS 10.0-10.1 reads;
- the values `resumedata inspect --json` reports of the output (URL, byte count, validators, partial
  file, both requests' URL, method and header fields) against the outside reading;
- what the operation must keep from its input, read the same way: the URL, the validators, the byte
  count where both forms hold one, both requests, WebKit's ResumePlaceholderURLBookmarkData where
  the output is a keyed archive;
- that repair and validate agree: a repaired blob is not judged unresumable on its target for a
  reason its input did not already have once repaired.

Prints one line per failed check and `N passed, M failed`; exits 1 on any failure.
Usage: outside_reader_check.py [--tool PATH] [--fixtures DIR] [--keep DIR] [--verbose]
"""
import argparse
import base64
import json
import os
import plistlib
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

from bpylist2 import archiver

LITERAL = "NSKeyedArchiveRootObjectKey"
MASK = b"TedLasso"
BPLIST = b"bplist00"
TARGETS = [
    "ios10.0-10.1", "ios10.2-10.3", "ios11.0-11.2", "ios11.3+", "ios12", "ios13+",
    "network-framework", "linux",
]
GENERATIONS = ["v1", "v2", "v4", "keyed", "safari", "network-framework", "network-framework-webkit"]
# Which forms each target reads (format notes §1 and §5: iOS 10 reads v2 and v1, iOS 11 adds v4,
# iOS 12 adds keyed archives, Network.framework reads only its own).
READS = {
    "ios10.0-10.1": {"v1", "v2"}, "ios10.2-10.3": {"v1", "v2"},
    "ios11.0-11.2": {"v1", "v2", "v4"}, "ios11.3+": {"v1", "v2", "v4"},
    "ios12": {"v1", "v2", "v4", "keyed", "safari"}, "ios13+": {"v1", "v2", "v4", "keyed", "safari"},
    "network-framework": {"network-framework"}, "linux": set(GENERATIONS),
}
BOOKMARK = "ResumePlaceholderURLBookmarkData"
K = {
    "url": "NSURLSessionDownloadURL", "bytes": "NSURLSessionResumeBytesReceived",
    "current": "NSURLSessionResumeCurrentRequest", "original": "NSURLSessionResumeOriginalRequest",
    "etag": "NSURLSessionResumeEntityTag", "date": "NSURLSessionResumeServerDownloadDate",
    "temp": "NSURLSessionResumeInfoTempFileName", "local": "NSURLSessionResumeInfoLocalPath",
    "version": "NSURLSessionResumeInfoVersion", "range": "NSURLSessionResumeByteRange",
    "response": "NSURLSessionResumeResponse",
}


class Unreadable(Exception):
    """What an outside reader refused, and where."""


# Inputs are read as what they mean, under whichever key they use (the fixtures include blobs
# forged under the wrong one); outputs only under the key Apple's decoder reads.
LENIENT = False


# --- The classes bpylist2 is taught, each from the format notes ----------------------------------

class URLObject:
    """NSURL: `NS.base` (nil or an NSURL) and `NS.relative` (a string)."""

    @staticmethod
    def decode_archive(archive):
        base = archive.decode("NS.base")
        relative = archive.decode("NS.relative")
        if not isinstance(relative, str):
            raise Unreadable("an NSURL without a string NS.relative")
        return urllib.parse.urljoin(base, relative) if base else relative


class RequestObject:
    """NSURLRequest (§4): `$0` 2, `$1` 9, `$2` N slots, then slot i under
    `__nsurlrequest_proto_prop_obj_i` (the standard layout) or `$(i+3)` (iOS 10.0-10.1's)."""

    @staticmethod
    def decode_archive(archive):
        raw = archive.object
        if "__nsurlrequest_proto_prop_obj_1" in raw:
            layout, key = "standard", lambda i: f"__nsurlrequest_proto_prop_obj_{i}"
        elif "$4" in raw:
            layout, key = "dollar", lambda i: f"${i + 3}"
        else:
            raise Unreadable("a request archive with neither slot layout")
        count = archive.decode("$2")
        if count not in (16, 22):
            raise Unreadable(f"a request archive with {count!r} slots")
        url = archive.decode(key(1))
        method = archive.decode(key(18)) if count == 22 else None
        headers = archive.decode(key(19)) if count == 22 else None
        if headers is not None and not (isinstance(headers, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in headers.items())):
            raise Unreadable("request header fields that are not a dictionary of strings")
        return {"layout": layout, "slots": count, "url": url, "method": method or "GET",
                "headers": headers or {}}


class FieldsObject:
    """Any other object (a response, Network.framework's resume info): its fields, decoded."""

    @staticmethod
    def decode_archive(archive):
        return {k: archive.decode(k) for k in archive.object if k != "$class"}


class StringObject:
    @staticmethod
    def decode_archive(archive):
        return archive.decode("NS.string")


class DataObject:
    @staticmethod
    def decode_archive(archive):
        return archive.decode("NS.data")


class NullObject:
    @staticmethod
    def decode_archive(archive):
        return None


archiver.update_class_map({
    "NSURL": URLObject, "NSURLRequest": RequestObject, "NSMutableURLRequest": RequestObject,
    "NSURLResponse": FieldsObject, "NSHTTPURLResponse": FieldsObject,
    "NWURLSessionDownloadResumeInfo": FieldsObject, "NWURLSessionResumeInfo": FieldsObject,
    "NSString": StringObject, "NSMutableString": StringObject, "NSData": DataObject,
    "NSNull": NullObject,
})


# --- Reading archives as Apple's decoders do -----------------------------------------------------

def load_plist(data, what):
    try:
        plist = plistlib.loads(data)
    except Exception as error:  # plistlib raises several types
        raise Unreadable(f"{what}: plistlib cannot read it: {error}")
    # XML has no UID element: CoreFoundation writes one as a dictionary holding only `CF$UID`.
    return with_uids(plist) if data.lstrip()[:1] == b"<" else plist


def with_uids(value):
    if isinstance(value, dict):
        if list(value) == ["CF$UID"] and isinstance(value["CF$UID"], int):
            return plistlib.UID(value["CF$UID"])
        return {k: with_uids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_uids(v) for v in value]
    return value


def check_envelope(plist, what):
    """The envelope NSKeyedArchiver writes (§3)."""
    problems = []
    if plist.get("$archiver") != "NSKeyedArchiver":
        problems.append(f"$archiver is {plist.get('$archiver')!r}")
    if plist.get("$version") != 100000:
        problems.append(f"$version is {plist.get('$version')!r}")
    objects = plist.get("$objects")
    if not isinstance(objects, list) or not objects or objects[0] != "$null":
        problems.append("$objects[0] is not $null")
    else:
        for index, item in enumerate(objects):
            if isinstance(item, dict) and "$class" in item:
                cls = item["$class"]
                target = objects[cls.data] if isinstance(cls, plistlib.UID) and cls.data < len(objects) else None
                if not (isinstance(target, dict) and isinstance(target.get("$classname"), str)
                        and isinstance(target.get("$classes"), list)
                        and all(isinstance(n, str) for n in target["$classes"])
                        and target["$classes"][:1] == [target["$classname"]]):
                    problems.append(f"$objects[{index}].$class is not a class object with $classname and $classes")
                    break
    if problems:
        raise Unreadable(f"{what}: " + "; ".join(problems))


def unarchive(data, key, what):
    """Decodes an archive looking up only `$top[key]`, as the Apple decoder for its form does:
    bpylist2 itself for `root` (it reads no other key), its object decoder under the literal
    key otherwise."""
    plist = load_plist(data, what)
    if not isinstance(plist, dict) or "$archiver" not in plist:
        raise Unreadable(f"{what}: not a keyed archive")
    check_envelope(plist, what)
    top = plist.get("$top")
    if LENIENT and isinstance(top, dict) and len(top) == 1:
        key = next(iter(top))
    if not isinstance(top, dict) or list(top) != [key]:
        keys = list(top) if isinstance(top, dict) else top
        raise Unreadable(f"{what}: $top is {keys!r}; Apple's decoder for it reads only {key!r}")
    if data.lstrip()[:1] == b"<":
        # bpylist2 reads binary archives: the same values, UIDs and all, written as one.
        data = plistlib.dumps(plist, fmt=plistlib.FMT_BINARY, sort_keys=False)
    try:
        if key == "root":
            return archiver.unarchive(data), plist
        reader = archiver.Unarchive(data)
        reader.objects = plist["$objects"]
        reader.top_uid = top[key]
        return reader.decode_object(reader.top_uid), plist
    except Unreadable:
        raise
    except Exception as error:
        raise Unreadable(f"{what}: bpylist2 cannot decode it: {type(error).__name__}: {error}")


def request_of(data, expect_layout, what):
    """A request archive: `root` with the `$N` layout for iOS 10.0-10.1, else the literal key with
    the standard layout. With `expect_layout` None, either of the two, as its `$top` says."""
    if expect_layout is None:
        # The layout its request object's keys are in; the key must then be that layout's.
        plist = load_plist(data, what)
        top = plist.get("$top") if isinstance(plist, dict) else None
        objects = plist.get("$objects") if isinstance(plist, dict) else None
        uid = next(iter(top.values()), None) if isinstance(top, dict) and len(top) == 1 else None
        root = objects[uid.data] if isinstance(uid, plistlib.UID) and isinstance(objects, list) \
            and uid.data < len(objects) else None
        expect_layout = "dollar" if isinstance(root, dict) and "$4" in root else "standard"
    key = "root" if expect_layout == "dollar" else LITERAL
    request, _ = unarchive(data, key, what)
    if not isinstance(request, dict) or "layout" not in request:
        raise Unreadable(f"{what}: the root is not an NSURLRequest")
    if request["layout"] != expect_layout:
        raise Unreadable(f"{what}: the {request['layout']} slot layout where {expect_layout} is read")
    return request


def response_headers(response):
    """The header fields of a decoded response: its field whose name holds "header"."""
    if not isinstance(response, dict):
        return {}
    for name, value in response.items():
        if "header" in name.lower() and isinstance(value, dict):
            return value
    return {}


def header(headers, name):
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    return None


def file_path(url_or_path):
    if isinstance(url_or_path, str) and url_or_path.startswith("file://"):
        return urllib.parse.unquote(urllib.parse.urlparse(url_or_path).path)
    return url_or_path


def read_blob(data, layout="standard"):
    """A resume blob read from the outside: its form and the values inspect reports."""
    if data[:8] == bytes(a ^ b for a, b in zip(BPLIST, MASK)):
        return read_network_framework(data, layout)
    plist = load_plist(data, "the blob")
    if not isinstance(plist, dict):
        raise Unreadable("the blob is not a dictionary")
    if "$archiver" in plist:
        root, envelope = unarchive(data, LITERAL, "the blob's archive")
        if not isinstance(root, dict):
            raise Unreadable("the blob's archive root is not a dictionary")
        if isinstance(root.get("data"), bytes) and K["local"] in root:
            inner = read_network_framework(root["data"], layout, "the wrapped blob")
            inner["form"] = "network-framework-webkit"
            inner["localPath"] = root[K["local"]]
            inner["xml"] = data.startswith(b"<?xml")
            return inner
        values = dictionary_values(root, layout)
        safari = K["local"] in root and K["original"] not in root and K["temp"] not in root
        values["form"] = "safari" if safari else "keyed"
        values["bookmark"] = envelope.get(BOOKMARK, root.get(BOOKMARK))
        values["xml"] = data.startswith(b"<?xml")
        return values
    values = dictionary_values(plist, layout)
    version = plist.get(K["version"])
    values["form"] = {1: "v1", 2: "v2", 4: "v4"}.get(version, f"plain, info version {version!r}")
    values["xml"] = data.startswith(b"<?xml")
    return values


def dictionary_values(entries, layout):
    values = {
        "downloadURL": entries.get(K["url"]), "bytesReceived": entries.get(K["bytes"]),
        "entityTag": entries.get(K["etag"]), "serverDownloadDate": entries.get(K["date"]),
        "tempFileName": entries.get(K["temp"]), "localPath": entries.get(K["local"]),
        "infoVersion": entries.get(K["version"]), "bookmark": entries.get(BOOKMARK),
    }
    for name in ("current", "original"):
        raw = entries.get(K[name])
        values[name] = request_of(raw, layout, f"{K[name]}") if isinstance(raw, bytes) else None
    values["layouts"] = {values[n]["layout"] for n in ("current", "original") if values[n]}
    raw = entries.get(K["response"])
    values["response"] = unarchive(raw, "root", K["response"])[0] if isinstance(raw, bytes) else None
    return values


def read_network_framework(data, layout, what="the Network.framework blob"):
    unmasked = bytes(a ^ b for a, b in zip(data[:8], MASK)) + data[8:]
    info, _ = unarchive(unmasked, "root", what)
    if not isinstance(info, dict) or "currentRequest" not in info:
        raise Unreadable(f"{what}: the root is not an NWURLSession…ResumeInfo")
    for name in ("currentRequest", "originalRequest"):
        request = info.get(name)
        if request is not None and request.get("layout") != "standard":
            raise Unreadable(f"{what}: {name} in the {request.get('layout')} slot layout")
    headers = response_headers(info.get("response"))
    current, original = info.get("currentRequest"), info.get("originalRequest")
    return {
        "form": "network-framework", "downloadURL": (current or original or {}).get("url"),
        "bytesReceived": None, "entityTag": header(headers, "ETag"),
        "serverDownloadDate": header(headers, "Last-Modified"),
        "tempFileName": info.get("tempFileName"), "localPath": file_path(info.get("fileURL")),
        "current": current, "original": original, "response": info.get("response"),
        "bookmark": None, "xml": False, "infoVersion": None, "layouts": {"standard"},
    }


# --- The run ---------------------------------------------------------------------------------------

class Checker:
    def __init__(self, tool, work, verbose):
        self.tool, self.work, self.verbose = tool, work, verbose
        self.passed, self.failures, self.refusals = 0, [], []

    def run(self, *arguments):
        return subprocess.run([self.tool, *arguments], capture_output=True, text=True, timeout=60)

    def fail(self, case, message):
        self.failures.append(f"{case}: {message}")
        print(f"FAIL {case}: {message}", flush=True)

    def inspect(self, path):
        result = self.run("inspect", "--json", path)
        if result.returncode not in (0, 1):
            raise Unreadable(f"inspect --json exits {result.returncode}: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def unresumable(self, path, target, key):
        """The finding codes that keep the blob at `path` from resuming on `target`, as validate
        --json reports them (`key`: `findings` as it is, `repairedFindings` once repaired)."""
        result = self.run("validate", "--json", "--target", target, path)
        report = json.loads(result.stdout)["files"][0]
        if key == "findings":
            return {f["code"] for f in report["findings"]
                    if f.get("outcome") not in ("unaffected", "resume")}
        return {f["code"] for f in report[key]} | (
            {"refused"} if report["status"] != "ok" else set())

    def check(self, case, source_path, source, out_path, *, form, layout="standard",
              expect_xml=None, edit=None, target=None):
        data = open(out_path, "rb").read()
        output = read_blob(data, None if layout == "either" else layout)
        problems = []
        if layout == "either":
            # iOS 10.0-10.1's layout is kept only in v1 and v2, which that system reads.
            want = "dollar" if source["layouts"] == {"dollar"} and output["form"] in ("v1", "v2") else "standard"
            if output["layouts"] - {want}:
                problems.append(f"request archives in the {', '.join(sorted(output['layouts']))} layout where {want} is read")
        if form is not None and output["form"] not in form:
            problems.append(f"written as {output['form']}, not {' or '.join(sorted(form))}")
        if expect_xml is not None and output["xml"] != expect_xml:
            problems.append(f"written as {'XML' if output['xml'] else 'binary'}, not as asked")
        # What our own reader reports of the output, against the outside reading.
        ours = self.inspect(out_path)
        for field in ("downloadURL", "bytesReceived", "entityTag", "serverDownloadDate",
                      "tempFileName", "localPath"):
            theirs = output[field]
            mine = file_path(ours.get(field)) if field == "localPath" else ours.get(field)
            if mine != theirs:
                problems.append(f"inspect says {field} {mine!r}, the outside reading {theirs!r}")
        for name in ("current", "original"):
            theirs, mine = output[name], ours.get(f"{name}Request")
            if (theirs is None) != (mine is None):
                problems.append(f"inspect and the outside reading disagree on whether there is a {name} request")
            elif theirs is not None:
                for field in ("url", "method", "headers"):
                    if mine.get(field) != theirs[field]:
                        problems.append(f"the {name} request's {field}: inspect {mine.get(field)!r}, outside {theirs[field]!r}")
        # What the operation keeps from its input.
        want_url = edit["url"] if edit else source["downloadURL"]
        if output["downloadURL"] != want_url:
            problems.append(f"the URL is {output['downloadURL']!r}, not {want_url!r}")
        for field in ("entityTag", "serverDownloadDate"):
            if source[field] is not None and output[field] != source[field]:
                problems.append(f"{field} {source[field]!r} became {output[field]!r}")
        if (source["bytesReceived"] is not None and output["form"] != "network-framework"
                and output["form"] != "network-framework-webkit"
                and output["bytesReceived"] != source["bytesReceived"]
                and not case.startswith("repair")):
            problems.append(f"BytesReceived {source['bytesReceived']!r} became {output['bytesReceived']!r}")
        for name in ("current", "original"):
            was, now = source[name], output[name]
            if was is None and name == "original" and now is not None:
                # Network.framework's object always holds one: filled from the current request.
                was = source["current"]
            if was is None:
                continue
            if now is None:
                if not (name == "original" and output["form"] == "safari"):
                    problems.append(f"the {name} request was lost")
                continue
            want_headers = dict(was["headers"])
            if edit:
                want_headers[edit["header"][0]] = edit["header"][1]
            for field, want in (("url", edit["url"] if edit else was["url"]),
                                ("method", was["method"]), ("headers", want_headers)):
                if now[field] != want:
                    problems.append(f"the {name} request's {field} {want!r} became {now[field]!r}")
        if source.get("bookmark") is not None and output["form"] in ("keyed", "safari") \
                and output.get("bookmark") != source["bookmark"]:
            problems.append(f"{BOOKMARK} was dropped")
        if target is not None:
            new = self.unresumable(out_path, target, "findings") - self.unresumable(
                source_path, target, "repairedFindings")
            if new:
                problems.append(f"validate --target {target} rejects the repaired blob for {', '.join(sorted(new))}, which its input once repaired did not have")
        if problems:
            for problem in problems:
                self.fail(case, problem)
        else:
            self.passed += 1
            if self.verbose:
                print(f"ok   {case}")

    def operation(self, case, source_path, source, arguments, **expect):
        out = os.path.join(self.work, f"out-{self.passed + len(self.failures) + len(self.refusals)}")
        result = self.run(*arguments, "-o", out)
        if result.returncode == 1:
            if os.path.exists(out):
                self.fail(case, "refused (exit 1) but left an output file")
            else:
                self.refusals.append(f"{case}: {result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ''}")
            return
        if result.returncode != 0:
            self.fail(case, f"exit {result.returncode}: {result.stderr.strip()}")
            return
        try:
            self.check(case, source_path, source, out, **expect)
        except Unreadable as error:
            self.fail(case, str(error))
        finally:
            if os.path.exists(out):
                os.remove(out)


def fixtures_of(root):
    found = []
    for sub in ("resume", "repair"):
        directory = os.path.join(root, sub)
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                found.append(path)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tool", default=".build/debug/resumedata", help="the resumedata binary")
    parser.add_argument("--fixtures", default="Fixtures", help="the Fixtures directory")
    parser.add_argument("--keep", help="write outputs into this directory (emptied first)")
    parser.add_argument("--verbose", action="store_true", help="print every check that passes")
    arguments = parser.parse_args()
    work = arguments.keep or tempfile.mkdtemp(prefix="resumedata-outside-")
    if arguments.keep:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    temp_dir = os.path.join(work, "tmp")
    os.makedirs(temp_dir, exist_ok=True)
    checker = Checker(os.path.abspath(arguments.tool), work, arguments.verbose)
    try:
        for path in fixtures_of(arguments.fixtures):
            name = os.path.relpath(path, arguments.fixtures)
            data = open(path, "rb").read()
            global LENIENT
            try:
                LENIENT = True
                source = read_blob(data, None)
            except Unreadable as error:
                checker.fail(f"read {name}", f"the fixture itself: {error}")
                continue
            finally:
                LENIENT = False
            for target in TARGETS:
                checker.operation(
                    f"repair {name} --target {target}", path, source,
                    ["repair", path, "--target", target],
                    form=READS[target], layout="dollar" if target == "ios10.0-10.1" else "standard",
                    target=target)
            for generation in GENERATIONS:
                for fmt in (None, "xml", "binary"):
                    arguments_ = ["convert", path, "--to", generation, "--temp-dir", temp_dir]
                    if fmt:
                        arguments_ += ["--format", fmt]
                    checker.operation(
                        f"convert {name} --to {generation}" + (f" --format {fmt}" if fmt else ""),
                        path, source, arguments_, form={generation}, layout="either",
                        expect_xml=None if fmt is None else fmt == "xml")
            edit = {"url": "https://example.org/new", "header": ("X-Test", "1")}
            checker.operation(
                f"edit {name}", path, source,
                ["edit", path, "--url", edit["url"], "--header", "X-Test: 1"],
                form=None, edit=edit, layout="either")
    finally:
        if not arguments.keep:
            shutil.rmtree(work, ignore_errors=True)
    for refusal in checker.refusals:
        print(f"refused {refusal}")
    print(f"{checker.passed} passed, {len(checker.failures)} failed, {len(checker.refusals)} refused")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
