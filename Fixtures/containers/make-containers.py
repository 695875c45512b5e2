#!/usr/bin/env python3
"""Writes Fixtures/containers/: documents apps keep resume blobs in, in the shapes the libraries
document, around the resume fixtures. Python 3 standard library only; run from the repository
root. The values around the blobs (URLs, dates, task IDs) are made up.
"""
import base64
import json
import plistlib

RESUME = "Fixtures/resume/"
OUT = "Fixtures/containers/"


def read(name):
    with open(RESUME + name, "rb") as f:
        return f.read()


with open("Fixtures/archive/response/synthetic-http-response.archive", "rb") as f:
    response = f.read()

# Tiercel: `<identifier>_Tasks.plist`, `PropertyListEncoder().encode([DownloadTask])` (binary).
# Each task encodes its Task fields through `superEncoder()` (under "super"), then `resumeData`
# (the blob, when paused or failed) and `response` (an archived HTTPURLResponse).
def task(url, file_name, status, completed, total, resume=None):
    entry = {
        "super": {
            "url": url,
            "currentURL": url,
            "fileName": file_name,
            "status": status,
            "verificationType": 0,
            "validation": 0,
            "startDate": 786_542_400.0,
            "endDate": 0.0,
            "totalBytes": total,
            "completedBytes": completed,
        },
        "response": response,
    }
    if resume is not None:
        entry["resumeData"] = resume
    return entry


tasks = [
    task("https://example.com/files/archive.zip", "archive.zip", "suspended", 1_048_576,
         4_194_304, read("v2.xml.plist")),
    task("https://example.com/files/archive.zip", "archive-2.zip", "failed", 1_048_576,
         4_194_304, read("keyed-v4.archive")),
    task("https://example.com/files/done.zip", "done.zip", "succeeded", 2048, 2048),
]
with open(OUT + "tiercel-tasks.plist", "wb") as f:
    plistlib.dump(tasks, f, fmt=plistlib.FMT_BINARY, sort_keys=False)

# background_downloader (Flutter): `ResumeData.toJsonMap()`, {task, data (base64 of the blob),
# requiredStartByte, eTag}, as kept in its persistent store.
download_task = {
    "taskId": "3581262749",
    "taskType": "DownloadTask",
    "url": "https://example.com/files/archive.zip",
    "headers": {},
    "httpRequestMethod": "GET",
    "filename": "archive.zip",
    "directory": "",
    "baseDirectory": 0,
    "group": "default",
    "updates": 1,
    "requiresWiFi": False,
    "retries": 0,
    "retriesRemaining": 0,
    "allowPause": True,
    "metaData": "",
    "creationTime": 1765101600000,
}
with open(OUT + "background-downloader.json", "w") as f:
    json.dump({"task": download_task,
               "data": base64.b64encode(read("keyed-v4.archive")).decode(),
               "requiredStartByte": 1_048_576, "eTag": "\"5534b35d-7c7be1\""}, f, indent=2)
    f.write("\n")

# Expo FileSystem: `JSON.stringify(downloadResumable.savable())`, a DownloadPauseState
# {url, fileUri, options, resumeData (base64 of the blob on iOS)}, as apps keep it in AsyncStorage.
with open(OUT + "expo-pause-state.json", "w") as f:
    json.dump({"url": "https://example.com/files/archive.zip",
               "fileUri": "file:///var/mobile/Containers/Data/Application/6A3B1C2D/Documents/archive.zip",
               "options": {"headers": {"Authorization": "Bearer made-up"}},
               "resumeData": base64.b64encode(read("keyed-v5-response.archive")).decode()}, f)
    f.write("\n")

# Android's pause state (background_downloader on Android, and others): a partial file and its
# validator, no Apple blob at all.
with open(OUT + "android-resume.json", "w") as f:
    json.dump({"tempFilePath": "/data/user/0/com.example.app/cache/com.bbflight.background_downloader3581262749",
               "eTag": "\"5534b35d-7c7be1\""}, f)
    f.write("\n")
