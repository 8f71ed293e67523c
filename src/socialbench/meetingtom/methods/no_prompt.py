"""No Prompt (MeetingToM 4.2, Table 3's reference row): one call per instance, the response the
answer's JSON object only (JSON mode). An instance whose clip is missing where the modality needs
video is answered without a call (scored invalid)."""

from socialbench.meetingtom.methods import AnsweringMethod


class NoPromptMethod(AnsweringMethod):
    pass


METHOD = NoPromptMethod
