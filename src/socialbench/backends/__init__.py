"""Model backends. See :mod:`socialbench.backends.base` for the plug-in contract."""

from socialbench.backends.base import (
    Backend,
    BackendContext,
    ImagePart,
    Message,
    ModelSpec,
    Request,
    Response,
    available_backends,
    create_backend,
    get_backend_class,
    register,
)

__all__ = [
    "Backend",
    "BackendContext",
    "ImagePart",
    "Message",
    "ModelSpec",
    "Request",
    "Response",
    "available_backends",
    "create_backend",
    "get_backend_class",
    "register",
]
