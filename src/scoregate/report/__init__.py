"""The HTML report: one self-contained page per run, per comparison and per ranking (no CDN, no server)."""

from scoregate.report.data import ReportOptions, build_report
from scoregate.report.write import REPORT_FILE, write_report, write_run_report

__all__ = ["REPORT_FILE", "ReportOptions", "build_report", "write_report", "write_run_report"]
