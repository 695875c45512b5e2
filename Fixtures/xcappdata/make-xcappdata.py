#!/usr/bin/env python3
"""Writes Fixtures/xcappdata/MyApp.xcappdata: a made-up app container as Xcode's Devices window
downloads it (Download Container...), holding resume blobs in several forms, partial files and an
orphan. Python 3 standard library only; run from the repository root.
"""
import base64
import os
import plistlib
import shutil

RESUME = "Fixtures/resume/"
ROOT = "Fixtures/xcappdata/MyApp.xcappdata"
APP = ROOT + "/AppData"


def read(name):
    with open(RESUME + name, "rb") as f:
        return f.read()


def write(path, data):
    os.makedirs(os.path.dirname(APP + "/" + path), exist_ok=True)
    with open(APP + "/" + path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


shutil.rmtree(ROOT, ignore_errors=True)
os.makedirs(APP)
with open(ROOT + "/AppDataInfo.plist", "wb") as f:
    plistlib.dump({"DeviceIdentifier": "00008110-000A1B2C3D4E5F60", "DeviceModel": "iPhone14,5",
                   "ProductVersion": "17.4.1", "BundleIdentifier": "com.example.app"}, f)

# 1. A blob as its own bytes (react-native-background-downloader keeps *.resumedata files).
write("Library/Caches/com.example.downloads/task-1.resumedata", read("v2.binary.plist"))
# 2. Base64 in JSON (Expo's pause state, as an app keeps it).
with open("Fixtures/containers/expo-pause-state.json", "rb") as f:
    write("Documents/pause-state.json", f.read())
# 3. Hex (`xxd -p` of a blob, as an app wrote it for a bug report).
hexed = read("keyed-v4.archive").hex()
write("Library/Application Support/resume.hex",
      "\n".join(hexed[i:i + 60] for i in range(0, len(hexed), 60)) + "\n")
# 4. Descriptions: NSData's, on a line of the app's log...
blob = read("v4-byte-range.xml.plist").hex()
described = " ".join(blob[i:i + 8] for i in range(0, len(blob), 8))
# ...and the description of a resume dictionary, over several lines, as NSLog prints it.
with open("Fixtures/captured/v2.nslog.txt") as f:
    dictionary = f.read()
write("Library/Logs/app.log",
      "2026-12-07 10:15:02.114 MyApp[412:9031] pausing the download\n"
      "2026-12-07 10:15:02.120 MyApp[412:9031] resume data: <" + described + ">\n"
      "2026-12-07 10:15:03.002 MyApp[412:9031] paused\n"
      "2026-12-07 10:16:40.551 MyApp[412:9031] resume dictionary: " + dictionary)
# 5. Data in UserDefaults' property list, beside values that are no blob.
with open(APP + "/Library/Preferences/com.example.app.plist", "wb") if os.makedirs(
        APP + "/Library/Preferences", exist_ok=True) is None else None as f:
    plistlib.dump({"lastURL": "https://example.com/files/archive.zip", "launchCount": 7,
                   "savedResumeData": read("v1.xml.plist")}, f, fmt=plistlib.FMT_BINARY,
                  sort_keys=False)
# Files that are no blob.
write("Documents/notes.txt", "Shopping: milk, eggs.\n")
# Partial files: the v2 blob's and the Expo blob's, short of what the blobs say (a test fixture
# stays small), and one no blob names.
write("tmp/CFNetworkDownload_a1b2c3.tmp", b"\0" * 16)
write("tmp/CFNetworkDownload_m4n5o6.tmp", b"\0" * 16)
write("tmp/CFNetworkDownload_x9y8z7.tmp", b"\0" * 32)
