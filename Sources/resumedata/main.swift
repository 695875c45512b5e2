import Foundation
import ResumeDataCLI

exit(ResumeDataTool.run(Array(CommandLine.arguments.dropFirst())).rawValue)
