#!/usr/bin/env python3
"""A plistlib pipeline as a benchmark peer of `resumedata batch --target ios13+`, for healthy keyed
(iOS 12+) and v2 XML (iOS 9-10) resume blobs: the work a Python script can do for them with the
standard library alone. `resumedata-bench peers` times it beside `resumedata batch --jobs 1` on the
same NDJSON file, and checks that its result lines equal ours.

usage: plistlib_pipeline.py [FILE]      (standard input when no FILE; results to standard output)

Per record, one at a time on one core:
  - the line parsed with json.loads, its "blob" decoded with base64.b64decode(validate=True);
  - the blob parsed with plistlib.loads (binary or XML, detected); a keyed archive's envelope
    checked ($archiver, $version, $top's NSKeyedArchiveRootObjectKey, $objects[0] "$null") and its
    root dictionary read through NS.keys / NS.objects (class NSMutableDictionary or NSDictionary);
    a plain dictionary taken as it is;
  - the resume dictionary's keys checked against the ones CFNetwork writes, and the values a
    diagnosis needs at minimum: the download URL an http(s) URL, the bytes received an integer
    above 0, a validator (an ETag that is not weak, or a Last-Modified date), the temp file name a
    bare name, the info version one the container can hold;
  - both request archives parsed with plistlib.loads and checked as keyed archives of an
    NSURLRequest or NSMutableURLRequest in the standard layout (__nsurlrequest_proto_prop_obj_N
    under NSKeyedArchiveRootObjectKey, every slot reference in range), their URL (slot 1, an NSURL's
    NS.relative), method (slot 18) and header fields (slot 19: names HTTP tokens, values free of
    CR, LF and NUL) read; the current request's method GET;
  - one NDJSON result line written in the shape of ours (schemaVersion, input, line, id, ok,
    generation, container, resumable, findings, output with the blob's base64 text carried over,
    error), with the one finding ours gives these blobs: a v2 blob's request archives in the layout
    iOS 10.0-10.1 cannot read back (info).

What it does not do, compared with `resumedata batch`: no other generation or container (v1, v4,
binary v2, Network.framework, WebKit's wrappers, Safari's), no repair or conversion, no other
finding than the above (a blob that fails a check gets one generic finding, where ours names the
rule and the key path), no check of the binary plists' structure beyond what plistlib's reader
refuses (ours checks every offset, reference and object of all three plists), no limits on sizes
or depth, errors without byte offsets, `id` re-serialized by json (ours echoes it as written),
no `path` records, one record at a time on one thread.
"""
import base64
import binascii
import json
import plistlib
import sys

DOWNLOAD_URL = "NSURLSessionDownloadURL"
BYTES_RECEIVED = "NSURLSessionResumeBytesReceived"
CURRENT_REQUEST = "NSURLSessionResumeCurrentRequest"
ORIGINAL_REQUEST = "NSURLSessionResumeOriginalRequest"
ENTITY_TAG = "NSURLSessionResumeEntityTag"
SERVER_DATE = "NSURLSessionResumeServerDownloadDate"
TEMP_FILE_NAME = "NSURLSessionResumeInfoTempFileName"
INFO_VERSION = "NSURLSessionResumeInfoVersion"
KNOWN_KEYS = frozenset([
    DOWNLOAD_URL, BYTES_RECEIVED, CURRENT_REQUEST, ORIGINAL_REQUEST, ENTITY_TAG, SERVER_DATE,
    TEMP_FILE_NAME, INFO_VERSION, "NSURLSessionResumeInfoLocalPath", "NSURLSessionResumeByteRange",
    "NSURLSessionResumeResponse",
])
ROOT_KEY = "NSKeyedArchiveRootObjectKey"
SLOT = "__nsurlrequest_proto_prop_obj_"
REQUEST_CLASSES = ("NSURLRequest", "NSMutableURLRequest")
DICTIONARY_CLASSES = ("NSMutableDictionary", "NSDictionary")
# RFC 9110's token characters, for header names.
TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789"
                  b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
IOS10_LAYOUT = {
    "code": "ios10-request-layout", "severity": "info",
    "message": "the request archives are in the layout every OS writes, which iOS 10.0\u201310.1 "
               "cannot read back (repair for that target)",
    "path": CURRENT_REQUEST,
}


class Malformed(Exception):
    """A blob this pipeline cannot read."""


class Unhealthy(Exception):
    """A blob this pipeline reads but would have to diagnose further (ours names a finding)."""


def archive_objects(archive):
    """The $objects of a keyed archive whose envelope is NSKeyedArchiver's, and its root UID."""
    if not isinstance(archive, dict) or archive.get("$archiver") != "NSKeyedArchiver":
        raise Malformed("not a keyed archive")
    if archive.get("$version") != 100000:
        raise Malformed("$version is not 100000")
    top = archive.get("$top")
    objects = archive.get("$objects")
    if not isinstance(top, dict) or not isinstance(objects, list) or not objects:
        raise Malformed("no $top or $objects")
    if objects[0] != "$null":
        raise Malformed("$objects[0] is not $null")
    root = top.get(ROOT_KEY)
    if root is None and "root" in top:
        raise Unhealthy("an archive under $top's root (the $N layout ours restores)")
    if not isinstance(root, plistlib.UID) or not 0 < root.data < len(objects):
        raise Malformed("$top has no NSKeyedArchiveRootObjectKey in range")
    return objects, root.data


def resolve(objects, reference):
    if not isinstance(reference, plistlib.UID) or reference.data >= len(objects):
        raise Malformed("a reference out of range")
    return objects[reference.data]


def class_name(objects, instance):
    description = resolve(objects, instance.get("$class"))
    if not isinstance(description, dict) or not isinstance(description.get("$classname"), str):
        raise Malformed("a $class without $classname")
    return description["$classname"]


def archived_dictionary(objects, instance):
    if not isinstance(instance, dict) or class_name(objects, instance) not in DICTIONARY_CLASSES:
        raise Malformed("not an archived dictionary")
    keys = instance.get("NS.keys")
    values = instance.get("NS.objects")
    if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
        raise Malformed("NS.keys and NS.objects differ")
    dictionary = {}
    for key, value in zip(keys, values):
        key = resolve(objects, key)
        if not isinstance(key, str) or key in dictionary:
            raise Malformed("a dictionary key that is not a string, or twice")
        dictionary[key] = resolve(objects, value)
    return dictionary


def read_request(data):
    """(URL, method, header fields) of an archived NSURLRequest in the standard layout."""
    if not isinstance(data, bytes):
        raise Malformed("a request that is not data")
    objects, root = archive_objects(plistlib.loads(data))
    request = objects[root]
    if not isinstance(request, dict) or class_name(objects, request) not in REQUEST_CLASSES:
        raise Malformed("the request archive holds no NSURLRequest")
    count = request.get("$2")
    if not isinstance(count, int) or not 0 <= count <= 64:
        raise Malformed("the request's slot count $2")
    slots = []
    for index in range(count):
        slot = request.get(SLOT + str(index))
        if slot is None:
            raise Unhealthy("a request slot missing (not the standard layout)")
        slots.append(resolve(objects, slot))
    if count < 20:
        raise Unhealthy("a request without an HTTP message")
    url = slots[1]
    if not isinstance(url, dict) or class_name(objects, url) != "NSURL":
        raise Malformed("the request's URL is not an NSURL")
    if resolve(objects, url.get("NS.base")) != "$null":
        raise Unhealthy("a relative request URL")
    url = resolve(objects, url.get("NS.relative"))
    method = slots[18]
    if not isinstance(url, str) or not isinstance(method, str):
        raise Malformed("the request's URL or method is not a string")
    headers = archived_dictionary(objects, slots[19]) if slots[19] != "$null" else {}
    for name, value in headers.items():
        if not name or not isinstance(value, str) or not TOKEN.issuperset(name.encode()) \
                or "\r" in value or "\n" in value or "\0" in value:
            raise Unhealthy("a header field that cannot be sent")
    return url, method, headers


def diagnose(blob):
    """(generation, container, info version, findings) of a healthy keyed or v2 blob."""
    keyed = blob.startswith(b"bplist00")
    value = plistlib.loads(blob)
    if isinstance(value, dict) and "$archiver" in value:
        objects, root = archive_objects(value)
        resume = archived_dictionary(objects, objects[root])
        generation, container, versions = "keyed", "keyed-archive", (4, 5)
    elif isinstance(value, dict) and not keyed:
        resume = value
        generation, container, versions = "v2", "xml-plist", (2,)
    else:
        raise Unhealthy("a form this pipeline does not read")
    if not KNOWN_KEYS.issuperset(resume):
        raise Unhealthy("a key CFNetwork does not write")
    url = resume.get(DOWNLOAD_URL)
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise Unhealthy("no http(s) download URL")
    received = resume.get(BYTES_RECEIVED)
    if not isinstance(received, int) or isinstance(received, bool) or received <= 0:
        raise Unhealthy("no bytes received")
    tag = resume.get(ENTITY_TAG)
    date = resume.get(SERVER_DATE)
    if not (isinstance(tag, str) and not tag.startswith("W/")) and not isinstance(date, str):
        raise Unhealthy("no validator")
    name = resume.get(TEMP_FILE_NAME)
    if not isinstance(name, str) or "/" in name or name in ("", ".", ".."):
        raise Unhealthy("no bare temp file name")
    version = resume.get(INFO_VERSION)
    if version not in versions:
        raise Unhealthy("an info version the container does not hold")
    _, method, _ = read_request(resume.get(CURRENT_REQUEST))
    read_request(resume.get(ORIGINAL_REQUEST))
    if method != "GET":
        raise Unhealthy("the current request is not a GET")
    # Every OS but iOS 10.0-10.1 reads the standard layout; only a v2 blob may meet those.
    return generation, container, version, [IOS10_LAYOUT] if generation == "v2" else []


def result(input_name, number, line):
    out = {"schemaVersion": 1, "input": input_name, "line": number, "id": None, "ok": False,
           "generation": None, "container": None, "resumable": None, "findings": None,
           "output": None, "error": None}
    try:
        record = json.loads(line)
        if not isinstance(record, dict) or not isinstance(record.get("blob"), str):
            raise ValueError("not a record with a blob")
        out["id"] = record.get("id")
        text = record["blob"]
        blob = base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error) as error:
        out["error"] = {"kind": "invalid-record", "file": input_name, "location": None,
                        "message": str(error)}
        return out
    try:
        generation, container, version, findings = diagnose(blob)
        out.update(ok=True, generation=generation, container=container, resumable=True,
                   findings=[], output={"generation": generation, "container": container,
                                        "infoVersion": version, "findings": findings,
                                        "blob": text, "written": None})
    except Unhealthy as problem:
        out.update(ok=True, resumable=False, findings=[{
            "code": "stand-in", "severity": "error", "message": str(problem), "path": None}])
    except (Malformed, plistlib.InvalidFileException, ValueError, KeyError, TypeError,
            IndexError, OverflowError) as error:
        out["error"] = {"kind": "malformed", "file": input_name, "location": None,
                        "message": str(error)}
    return out


def main():
    arguments = sys.argv[1:]
    if len(arguments) > 1 or arguments and arguments[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1])
        return 0 if arguments and arguments[0] in ("-h", "--help") else 64
    input_name = arguments[0] if arguments else "-"
    source = open(input_name, "rb") if arguments else sys.stdin.buffer
    write = sys.stdout.write
    failed = False
    with source:
        for number, line in enumerate(source, 1):
            out = result(input_name, number, line)
            failed = failed or not out["ok"] or not out["resumable"]
            write(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
            write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
