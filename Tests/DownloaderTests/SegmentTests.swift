import Foundation
import ResumeData
import Testing

@testable import Downloader

@Suite("Segment schedule: who fetches what")
struct SegmentScheduleTests {
  @Test("A fresh file is halved into as many parts as connections, largest first")
  func prepare() {
    var schedule = SegmentSchedule(map: SegmentMap(total: 1000, onDisk: []), minimumSize: 10)
    #expect(schedule.assign(to: 0) == 0)
    schedule.prepare(connections: 4)
    #expect(
      schedule.segments.map { $0.start..<$0.end } == [0..<250, 250..<500, 500..<750, 750..<1000])
    #expect(schedule.segments.map(\.owner) == [0, nil, nil, nil])
    #expect(schedule.assign(to: 1) == 250)
    #expect(schedule.assign(to: 2) == 500)
    #expect(schedule.assign(to: 3) == 750)
  }

  @Test("Parts below twice the minimum are not split")
  func minimum() {
    var schedule = SegmentSchedule(map: SegmentMap(total: 30, onDisk: []), minimumSize: 10)
    schedule.prepare(connections: 4)
    #expect(schedule.segments.map { $0.start..<$0.end } == [0..<15, 15..<30])
    #expect(schedule.assign(to: 0) == 0)
    #expect(schedule.assign(to: 1) == 15)
    #expect(schedule.assign(to: 2) == nil)
  }

  @Test("Gaps of a map on disk become the parts; done ranges are never handed out")
  func gaps() {
    var schedule = SegmentSchedule(
      map: SegmentMap(total: 100, onDisk: [0..<20, 50..<60]), minimumSize: 100)
    #expect(schedule.assign(to: 0) == 20)
    #expect(schedule.assign(to: 1) == 60)
    #expect(schedule.assign(to: 2) == nil)
    #expect(schedule.bytesOnDisk == 30)
    #expect(schedule.map.onDisk == [0..<20, 50..<60])
  }

  @Test("Claims stop at the part's end; commits put bytes on disk")
  func claims() {
    var schedule = SegmentSchedule(map: SegmentMap(total: 100, onDisk: []), minimumSize: 10)
    #expect(schedule.assign(to: 0) == 0)
    schedule.prepare(connections: 2)
    #expect(schedule.claim(0, worker: 0, count: 30) == (0, 30))
    schedule.commit(0, through: 30)
    #expect(schedule.claim(0, worker: 0, count: 30) == (30, 20))
    #expect(!schedule.isDone(0))
    schedule.commit(0, through: 50)
    #expect(schedule.isDone(0))
    #expect(schedule.claim(0, worker: 0, count: 30) == (50, 0))
    // Another connection's part cannot be claimed.
    #expect(schedule.claim(50, worker: 0, count: 10) == (0, 0))
    #expect(schedule.map.onDisk == [0..<50])
  }

  @Test("A connection with nothing left takes over the back half of the largest part")
  func stealing() {
    var schedule = SegmentSchedule(map: SegmentMap(total: 1000, onDisk: []), minimumSize: 10)
    #expect(schedule.assign(to: 0) == 0)
    schedule.prepare(connections: 2)
    #expect(schedule.assign(to: 1) == 500)
    // Connection 0 finishes; connection 1 has claimed 100 bytes of its 500.
    _ = schedule.claim(0, worker: 0, count: 500)
    schedule.commit(0, through: 500)
    _ = schedule.claim(500, worker: 1, count: 100)
    #expect(schedule.assign(to: 0) == 800)
    #expect(schedule.segment(startingAt: 500)?.end == 800)
    #expect(schedule.segment(startingAt: 800)?.owner == 0)
    // Connection 1's chunk in flight still fits; its next claims stop at the new end.
    schedule.commit(500, through: 600)
    #expect(schedule.claim(500, worker: 1, count: 500) == (600, 200))
  }

  @Test("A released part is claimed again from what is on disk")
  func release() {
    var schedule = SegmentSchedule(map: SegmentMap(total: 100, onDisk: []), minimumSize: 100)
    #expect(schedule.assign(to: 0) == 0)
    _ = schedule.claim(0, worker: 0, count: 40)
    schedule.commit(0, through: 25)
    schedule.release(0, worker: 0)
    #expect(schedule.segment(startingAt: 0)?.owner == nil)
    #expect(schedule.assign(to: 3) == 0)
    #expect(schedule.claim(0, worker: 3, count: 10) == (25, 10))
  }
}
