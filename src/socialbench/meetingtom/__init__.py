"""MeetingToM: multimodal theory-of-mind questions on AMI meetings (data, mining, benchmark)."""
